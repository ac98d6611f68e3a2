package offline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/lossguard"
	"github.com/dreamkit/dream/internal/memory"
)

// fragments are the pieces random memories are built from: the shapes
// people and agents really write, decoys included.
var fragments = []string{
	"# Project\n", "## Setup\n", "### Setup\n", "## 2026-11-02\n", "## Billing\n", "**Production**\n", "**Staging:**\n",
	"- Owner: Ana Souza\n", "- Owner: Ana Souza.\n", "- **Owner:** Ana Souza\n", "- Run the checks with `make check`.\n",
	"1. Run the checks with `make check`.\n", "2. Bump the version.\n", "3. Run the checks with `make check`.\n",
	"- Restart the worker after a config change.\n  Wait for the health check.\n", "- Rotate the logs weekly.\n  - only on the primary\n",
	"- Yesterday we moved CI to GitHub Actions.\n", "- The Today screen lives in src/screens/Today.tsx.\n",
	"- Delete snapshots older than 30 days ago.\n", "Standup: Yesterday, Today, Blockers.\n", "> Yesterday the vendor confirmed the quota.\n",
	"    make backup-today # yesterday\n", "```sh\n# yesterday\nredis-cli FLUSHDB\n```\n", "~~~\n- [x](y.md)\n~~~\n",
	"昨天，我们把导入器迁到了新集群。\n", "目前天津机房的提前天数是三天。\n", "- 上周 开始灰度。\n", "- 去年 的方案已废弃。\n",
	"| day | plan |\n|---|---|\n| today | deploy |\n", "The staging cluster is shared with payments.\n",
	"- The staging database is never reset. <!-- pin -->\n", "- Write `<!-- pin -->` to pin a line.\n",
	"To reset the cache:\n", "<!-- archive/ is not indexed -->\n", "- [Other](other.md) — another topic\n",
	"- Keep trailing spaces.  \n", "- CRLF line.\r\n", "\n", "\n", "\n", "Last night the backup failed.\n",
	"- This week the freeze is on.\n", "* star item\n", "+ plus item\n", "- [ ] open task: ship it\n", "---\n",
}

// randomMemory writes an index and a few topic files of random fragments,
// repeated so that duplicates occur.
func randomMemory(rng *rand.Rand, dir string) error {
	files := map[string]string{"MEMORY.md": "# Memory\n\n- [Topic 0](t0.md) — first\n"}
	for f := 0; f < 1+rng.IntN(4); f++ {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "---\nname: t%d\ndescription: topic %d\n---\n\n", f, f)
		}
		n := 5 + rng.IntN(30)
		var used []string
		for i := 0; i < n; i++ {
			frag := fragments[rng.IntN(len(fragments))]
			if len(used) > 0 && rng.IntN(4) == 0 {
				frag = used[rng.IntN(len(used))]
			}
			used = append(used, frag)
			b.WriteString(frag)
		}
		files[fmt.Sprintf("t%d.md", f)] = b.String()
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkEngine runs the engine twice over dir and fails t unless every unit
// of the input is still byte-identical in its file or named by a fix
// record, and the second run changes nothing.
func checkEngine(t *testing.T, dir string, o Options) {
	t.Helper()
	o.MemoryDir, o.Now = dir, testNow
	before, err := lossguard.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	after, err := lossguard.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := lossguard.Check(before, after, lossguard.Options{Strict: true, Records: records(rep)}); v.Err() != nil {
		t.Fatalf("%v\nfixes: %+v", v.Err(), rep.Fixes)
	}
	sameStructure(t, before, after, rep)
	again, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Fixes) != 0 || len(again.FilesTouched) != 0 {
		t.Fatalf("second run changed %v: %+v", again.FilesTouched, again.Fixes)
	}
}

// TestPropertyRandomMemories: random Markdown memories through the engine
// keep every unit or name it, and are stable after one run.
func TestPropertyRandomMemories(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	if v, err := strconv.Atoi(os.Getenv("DREAM_PROPERTY_SEEDS")); err == nil && v > 0 {
		n = v // a longer search: DREAM_PROPERTY_SEEDS=5000
	}
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		dir := t.TempDir()
		if err := randomMemory(rng, dir); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkEngine(t, dir, Options{Layout: LayoutFor("")}) })
	}
}

// FuzzEngine feeds arbitrary bytes as a topic file (and as the index) to
// the engine: go test ./internal/offline -run=^$ -fuzz=FuzzEngine
func FuzzEngine(f *testing.F) {
	for _, frag := range fragments {
		f.Add([]byte(frag+frag), []byte("# Memory\n"))
	}
	f.Add([]byte("\xef\xbb\xbf- a b c d\r\n- a b c d\r\n"), []byte("- [A](a.md)\n"))
	f.Fuzz(func(t *testing.T, topic, index []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "notes.md"), topic, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), index, 0o644); err != nil {
			t.Fatal(err)
		}
		checkEngine(t, dir, Options{Layout: LayoutFor("")})
	})
}

// sameStructure checks what byte identity alone cannot: every unit of the
// input that no fix names is still a unit of the same kind, with the same
// text, under the same heading path (a removal must not re-parent or merge
// its neighbours).
func sameStructure(t *testing.T, before, after lossguard.Tree, rep Report) {
	t.Helper()
	key := func(d *memory.Doc, u memory.Unit) string {
		return string(u.Kind) + "\x00" + strings.Join(u.Path, "\x1f") + "\x00" + d.Text(u)
	}
	for rel, src := range before {
		bd := memory.ParseDoc(src)
		ad := memory.ParseDoc(after[rel])
		have := map[string]int{}
		for _, u := range ad.Units {
			have[key(ad, u)]++
		}
	units:
		for _, u := range bd.Units {
			if !u.Leaf {
				continue
			}
			for _, f := range rep.Fixes {
				if f.File == rel && (f.Start < u.End && u.Start < f.End || f.Start == f.End && f.Start > u.Start && f.Start < u.End) {
					continue units
				}
			}
			k := key(bd, u)
			if have[k] == 0 {
				t.Fatalf("%s: %s unit %q under %v lost its place\nbefore:\n%s\nafter:\n%s", rel, u.Kind, bd.Text(u), u.Path, src, after[rel])
			}
			have[k]--
		}
	}
}
