package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// randomTree is randomMemory plus what a real memory also has: files in
// folders (a nested topic with its own headings, a procedure and Chinese
// notes), sometimes no index at all (the engine then starts one), and an
// index long enough to go over budget (the engine then creates the
// overflow file).
func randomTree(rng *rand.Rand, dir string) error {
	if err := randomMemory(rng, dir); err != nil {
		return err
	}
	for k := 0; k < rng.IntN(3); k++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# Area %d\n\n## Runbook\n\n### Steps\n\n1. Drain the node.\n2. Yesterday we rotated the keys.\n3. Drain the node.\n\n", k)
		for i := 0; i < 4+rng.IntN(12); i++ {
			b.WriteString(fragments[rng.IntN(len(fragments))])
		}
		b.WriteString("\n## 2026-11-18\n\n- 昨天，我们把导入器迁到了新集群。\n- The cache is warmed from the primary.\n- The cache is warmed from the primary.\n")
		p := filepath.Join(dir, "projects", fmt.Sprintf("p%d", k), "notes.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	switch rng.IntN(4) {
	case 0:
		return os.Remove(filepath.Join(dir, "MEMORY.md"))
	case 1:
		var b strings.Builder
		b.WriteString("# Memory\n\n- [Topic 0](t0.md) — first\n\n## Notes\n\n")
		for i := 0; i < 230; i++ {
			fmt.Fprintf(&b, "- note %d: the staging cluster %d is shared with payments\n", i, i)
		}
		return os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(b.String()), 0o644)
	case 2:
		// Over budget with pointers alone: nothing may move, a note says so.
		var b strings.Builder
		b.WriteString("# Memory\n\n<!-- archive/ is not indexed on purpose -->\n\n- [Topic 0](t0.md) — first\n")
		for i := 0; i < 230; i++ {
			fmt.Fprintf(&b, "- [Area %d](area-%d.md) — the staging cluster %d\n", i, i, i)
		}
		return os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(b.String()), 0o644)
	}
	return nil
}

// TestWriteDirEqualsInPlace: over random memories, a run with WriteDir
// leaves the memory dir byte-identical, writes only files that change, and
// its output laid over the memory is byte for byte what an in-place run
// leaves, with the same report (fixes, leads, notes, found leads) and the
// same cache.
func TestWriteDirEqualsInPlace(t *testing.T) {
	n := 120
	if testing.Short() {
		n = 30
	}
	// What the memories made the engine do, so that the test is known to
	// cover writes in folders, a new index and a new overflow file.
	var nested, newIndex, newOverflow int
	for seed := uint64(0); seed < uint64(n); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 15))
			base := t.TempDir()
			if err := randomTree(rng, base); err != nil {
				t.Fatal(err)
			}
			inPlace, readOnly, out := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "out")
			copyTree(t, base, inPlace)
			copyTree(t, base, readOnly)
			before := readAll(t, readOnly)
			state := t.TempDir()
			cacheA, cacheB := filepath.Join(state, "a.bin"), filepath.Join(state, "b.bin")

			repA, err := Run(context.Background(), Options{MemoryDir: inPlace, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: cacheA})
			if err != nil {
				t.Fatal(err)
			}
			repB, err := Run(context.Background(), Options{MemoryDir: readOnly, WriteDir: out, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: cacheB})
			if err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal(repA)
			jb, _ := json.Marshal(repB)
			if !bytes.Equal(ja, jb) {
				t.Fatalf("reports differ:\n%s\n---\n%s", ja, jb)
			}
			if after := readAll(t, readOnly); !sameFiles(before, after) {
				t.Fatal("the memory dir changed in write-dir mode")
			}
			written := readAll(t, out)
			if len(written) != len(repB.FilesTouched) {
				t.Fatalf("write dir holds %d files, the report touched %v", len(written), repB.FilesTouched)
			}
			for _, rel := range repB.FilesTouched {
				if _, ok := written[rel]; !ok {
					t.Fatalf("touched %s is not in the write dir", rel)
				}
				if bytes.Equal(written[rel], before[rel]) {
					t.Fatalf("%s written unchanged", rel)
				}
				if _, ok := before[rel]; !ok && rel == "MEMORY.md" {
					newIndex++
				}
				if _, ok := before[rel]; !ok && rel == OverflowFile {
					newOverflow++
				}
				if strings.Contains(rel, "/") {
					nested++
				}
			}
			overlay := before
			for rel, b := range written {
				overlay[rel] = b
			}
			if want := readAll(t, inPlace); !sameFiles(overlay, want) {
				for k := range want {
					if !bytes.Equal(want[k], overlay[k]) {
						t.Fatalf("%s differs:\n%s\n---\n%s", k, want[k], overlay[k])
					}
				}
				t.Fatalf("overlay holds %d files, in place %d", len(overlay), len(want))
			}
			if !sameCache(t, cacheA, cacheB) {
				t.Fatal("the caches differ")
			}
		})
	}
	if nested == 0 || newIndex == 0 || newOverflow == 0 {
		t.Fatalf("the random memories did not cover every case: %d nested writes, %d new indexes, %d new overflow files", nested, newIndex, newOverflow)
	}
}

// TestWriteDirRefusesALinkOut: a write dir whose folder is a link to
// somewhere else is not written through.
func TestWriteDirRefusesALinkOut(t *testing.T) {
	mem, out, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(mem, "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(mem, "projects", "a.md"), []byte("- Deploys run from main after review.\n- Deploys run from main after review.\n"), 0o644)
	if err := os.Symlink(elsewhere, filepath.Join(out, "projects")); err != nil {
		t.Skip(err)
	}
	_, err := Run(context.Background(), Options{MemoryDir: mem, WriteDir: out, Now: testNow, Layout: LayoutFor("")})
	if err == nil {
		t.Fatal("wrote through a link in the write dir")
	}
	if es, _ := os.ReadDir(elsewhere); len(es) != 0 {
		t.Fatalf("wrote outside the write dir: %v", es)
	}
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// sameCache compares two caches' analyses (paths, hashes, summaries),
// whatever else they record about where the files were.
func sameCache(t *testing.T, a, b string) bool {
	t.Helper()
	ca, cb := loadCache(a, LayoutFor("").fingerprint(), false), loadCache(b, LayoutFor("").fingerprint(), false)
	if ca == nil || cb == nil {
		t.Fatalf("no cache: %v %v", ca != nil, cb != nil)
	}
	if len(ca.entries) != len(cb.entries) {
		return false
	}
	for _, e := range ca.entries {
		f, ok := cb.entry(e.rel, -1)
		if !ok || e.hash != f.hash {
			return false
		}
		x, _ := json.Marshal(e.sum)
		y, _ := json.Marshal(f.sum)
		if !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}
