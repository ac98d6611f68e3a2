package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParallelEqualsSerial: over random memories of many files, a run on
// several workers writes and reports (fixes in order, leads, notes, found
// leads) exactly what a run on one does.
func TestParallelEqualsSerial(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 15
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 77))
			base := t.TempDir()
			if err := randomTree(rng, base); err != nil {
				t.Fatal(err)
			}
			// Many more files, so that the workers really interleave.
			for k := 0; k < 20+rng.IntN(60); k++ {
				var b strings.Builder
				if rng.IntN(2) == 0 {
					fmt.Fprintf(&b, "---\nname: extra %d\ndescription: extra topic %d\n---\n\n", k, k)
				}
				for i := 0; i < 3+rng.IntN(15); i++ {
					b.WriteString(fragments[rng.IntN(len(fragments))])
				}
				name := fmt.Sprintf("extra-%02d.md", k)
				if rng.IntN(5) == 0 {
					name = fmt.Sprintf("projects/deep/extra-%02d.md", k)
				}
				p := filepath.Join(base, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var reports [][]byte
			var trees []map[string][]byte
			for _, workers := range []int{1, 7, 2} {
				dir := t.TempDir()
				copyTree(t, base, dir)
				rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true,
					Provenance: testProvenance{}, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(rep)
				reports = append(reports, b)
				trees = append(trees, readAll(t, dir))
			}
			for i := 1; i < len(reports); i++ {
				if !bytes.Equal(reports[0], reports[i]) {
					t.Fatalf("reports differ:\n%s\n---\n%s", reports[0], reports[i])
				}
				if !sameFiles(trees[0], trees[i]) {
					t.Fatal("written files differ")
				}
			}
		})
	}
}

// testProvenance dates some lines and not others, without locks: the
// engine serialises its calls.
type testProvenance struct{}

func (testProvenance) WrittenOn(rel, line string) (t0 time.Time, ok bool) {
	if strings.Contains(line, "Last night") || strings.Contains(rel, "extra-0") {
		return testNow.AddDate(0, 0, -3), true
	}
	return t0, false
}

// TestParallelErrorIsTheFirst: when files fail, the error is that of the
// first in order, as a serial run would report.
func TestParallelErrorIsTheFirst(t *testing.T) {
	s := &state{opts: Options{Workers: 4}}
	var fs []*file
	for i := 0; i < 500; i++ {
		fs = append(fs, &file{rel: fmt.Sprint(i)})
	}
	for range 20 {
		err := s.each(context.Background(), fs, func(f *file) error {
			if f.rel == "120" || f.rel == "300" || f.rel == "499" {
				return errors.New(f.rel)
			}
			return nil
		})
		if err == nil || err.Error() != "120" {
			t.Fatalf("error %v, want the first file's", err)
		}
	}
}

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
