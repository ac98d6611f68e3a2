package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	goldenNow      = time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	goldenFileTime = time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
)

// TestGolden runs the engine over each testdata/golden/<case>/in tree and
// compares the result with want/ byte for byte, and the report with
// report.json. go test -run TestGolden -update rewrites both.
func TestGolden(t *testing.T) {
	cases, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			base := filepath.Join("testdata", "golden", c.Name())
			work := t.TempDir()
			copyTree(t, filepath.Join(base, "in"), work)
			rep, err := Run(context.Background(), Options{MemoryDir: work, Now: goldenNow,
				FileTime: func(string) time.Time { return goldenFileTime }})
			if err != nil {
				t.Fatal(err)
			}
			gotReport, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			gotReport = append(gotReport, '\n')
			if *update {
				if err := os.RemoveAll(filepath.Join(base, "want")); err != nil {
					t.Fatal(err)
				}
				copyTree(t, work, filepath.Join(base, "want"))
				if err := os.WriteFile(filepath.Join(base, "report.json"), gotReport, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			compareTrees(t, filepath.Join(base, "want"), work)
			want, err := os.ReadFile(filepath.Join(base, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, gotReport) {
				t.Errorf("report differs from %s/report.json:\n%s", base, gotReport)
			}

			// A second run over the result must change nothing: every fix
			// is final, so dreams do not churn the memory night after night.
			again, err := Run(context.Background(), Options{MemoryDir: work, Now: goldenNow,
				FileTime: func(string) time.Time { return goldenFileTime }})
			if err != nil {
				t.Fatal(err)
			}
			if len(again.FilesTouched) != 0 {
				t.Errorf("second run touched %v: %+v", again.FilesTouched, again.Fixes)
			}
		})
	}
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	for rel, data := range readTree(t, src) {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func compareTrees(t *testing.T, want, got string) {
	t.Helper()
	w, g := readTree(t, want), readTree(t, got)
	var names []string
	for k := range w {
		names = append(names, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		wd, wok := w[n]
		gd, gok := g[n]
		switch {
		case !wok:
			t.Errorf("unexpected file %s:\n%s", n, gd)
		case !gok:
			t.Errorf("missing file %s", n)
		case !bytes.Equal(wd, gd):
			t.Errorf("%s differs:\n--- got ---\n%s\n--- want ---\n%s", n, gd, wd)
		}
	}
}
