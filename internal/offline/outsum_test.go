//go:build unix

package offline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestCacheOfWrittenIsAFreshParse: the cache entry of every file a run
// writes (taken from the structure check's parse where it can be) is what
// a fresh parse of the written bytes gives, since the next dream trusts it
// without parsing the file: the cache a first run leaves equals the cache
// a run with no cache makes of its output. Over random memories (those in
// which the run creates no file, which the first cache cannot hold), in
// place and with a write dir, and over the benchmark's memory (repeats and
// dates together in most files).
func TestCacheOfWrittenIsAFreshParse(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 15
	}
	compared := 0
	check := func(t *testing.T, base string, writeDir bool) {
		mem, state := t.TempDir(), t.TempDir()
		copyTree(t, base, mem)
		first := Options{MemoryDir: mem, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: filepath.Join(state, "first.bin")}
		if writeDir {
			first.WriteDir = filepath.Join(t.TempDir(), "out")
		}
		rep, err := Run(context.Background(), first)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range rep.FilesTouched {
			if _, err := os.Lstat(filepath.Join(base, filepath.FromSlash(rel))); os.IsNotExist(err) {
				return // a file the run created is read by the next run
			}
		}
		output := t.TempDir()
		copyTree(t, mem, output)
		if writeDir {
			copyTree(t, first.WriteDir, output)
		}
		fresh := Options{MemoryDir: output, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: filepath.Join(state, "fresh.bin")}
		again, err := Run(context.Background(), fresh)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.FilesTouched) != 0 {
			t.Fatalf("a second run wrote %v", again.FilesTouched)
		}
		if !sameCache(t, first.CacheFile, fresh.CacheFile) {
			t.Fatalf("the first run's cache (%d files written) is not what a fresh parse of its output gives", len(rep.FilesTouched))
		}
		compared += len(rep.FilesTouched)
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			base := t.TempDir()
			if err := randomTree(rand.New(rand.NewPCG(seed, 21)), base); err != nil {
				t.Fatal(err)
			}
			check(t, base, seed%2 == 0)
		})
	}
	t.Run("bench", func(t *testing.T) {
		base := t.TempDir()
		writeBench(t, base, 40, false)
		check(t, base, true)
		check(t, base, false)
	})
	if compared < 100 {
		t.Fatalf("only %d written files compared", compared)
	}
}
