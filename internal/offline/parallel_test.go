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
// several workers writes, reports (fixes in order, leads, notes, found
// leads) and caches exactly what a run on one does.
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
			state := t.TempDir()
			var reports [][]byte
			var trees []map[string][]byte
			for i, workers := range []int{1, 7, 2} {
				dir := t.TempDir()
				copyTree(t, base, dir)
				rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true,
					Provenance: testProvenance{}, CacheFile: filepath.Join(state, fmt.Sprint(i)), Workers: workers})
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
				if !sameCache(t, filepath.Join(state, "0"), filepath.Join(state, fmt.Sprint(i))) {
					t.Fatal("caches differ")
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
