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

	"github.com/dreamkit/dream/internal/lossguard"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenCase is a case's optional case.json.
type goldenCase struct {
	// Host picks the layout (LayoutFor).
	Host string `json:"host"`
	// Sessions reads the case's sessions/ transcripts as provenance.
	Sessions bool `json:"sessions"`
}

// TestGolden runs the engine over each testdata/golden/<case>/in tree (one
// case per fix kind, fix_*, and per decoy class, decoy_*) and compares the
// result with want/ byte for byte and the report with report.json; every
// file's mtime is set to the run's day first, to show that it anchors no
// date. Each result must also pass the strict loss guard against the input,
// and a second run must change nothing.
// go test ./internal/offline -run TestGolden -update rewrites the goldens.
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
			var gc goldenCase
			if b, err := os.ReadFile(filepath.Join(base, "case.json")); err == nil {
				if err := json.Unmarshal(b, &gc); err != nil {
					t.Fatal(err)
				}
			}
			work := t.TempDir()
			copyTree(t, filepath.Join(base, "in"), work)
			touchAll(t, work, testNow.Add(-2*time.Hour))
			o := Options{MemoryDir: work, Now: testNow, Layout: LayoutFor(gc.Host)}
			if gc.Sessions {
				tr, err := LoadTranscripts(context.Background(), filepath.Join(base, "sessions"))
				if err != nil {
					t.Fatal(err)
				}
				o.Provenance = tr
			}
			before, err := lossguard.ReadTree(work)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			after, err := lossguard.ReadTree(work)
			if err != nil {
				t.Fatal(err)
			}
			if v := lossguard.Check(before, after, lossguard.Options{Strict: true, Records: records(rep)}); v.Err() != nil {
				t.Errorf("strict loss guard: %v", v.Err())
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
			} else {
				compareTrees(t, filepath.Join(base, "want"), work)
				want, err := os.ReadFile(filepath.Join(base, "report.json"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, gotReport) {
					t.Errorf("report differs from %s/report.json:\n%s", base, gotReport)
				}
			}
			again, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.FilesTouched) != 0 || len(again.Fixes) != 0 {
				t.Errorf("second run changed %v: %+v", again.FilesTouched, again.Fixes)
			}
		})
	}
}

func records(rep Report) []lossguard.Record {
	var rs []lossguard.Record
	for _, f := range rep.Fixes {
		rs = append(rs, lossguard.Record{File: f.File, Start: f.Start, End: f.End})
	}
	return rs
}

func touchAll(t *testing.T, dir string, at time.Time) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			os.Chtimes(p, at, at)
		}
		return nil
	})
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return nil
	})
	return out
}

func compareTrees(t *testing.T, want, got string) {
	t.Helper()
	w, g := readAll(t, want), readAll(t, got)
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
	for _, k := range names {
		if !bytes.Equal(w[k], g[k]) {
			t.Errorf("%s differs:\n--- want\n%s\n--- got\n%s", k, w[k], g[k])
		}
	}
}
