package offline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestCacheOfWrittenIsAFreshParse: the cache entry of every file a run
// writes (taken from the structure check's parse where it can be) is what
// a fresh parse of the written bytes gives, since the next dream trusts it
// without reading the file. Over random memories, in place and with a
// write dir, and over the benchmark's memory (repeats and dates together
// in most files).
func TestCacheOfWrittenIsAFreshParse(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 15
	}
	check := func(t *testing.T, base string, writeDir bool) {
		mem := t.TempDir()
		copyTree(t, base, mem)
		o := Options{MemoryDir: mem, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: filepath.Join(t.TempDir(), "cache.bin")}
		outDir := mem
		if writeDir {
			o.WriteDir = filepath.Join(t.TempDir(), "out")
			outDir = o.WriteDir
		}
		rep, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		c := loadCache(o.CacheFile, o.Layout.fingerprint(), false)
		if c == nil {
			t.Fatal("no cache")
		}
		fresh := &state{opts: o, roles: o.Layout.roles()}
		for _, rel := range rep.FilesTouched {
			data, err := os.ReadFile(filepath.Join(outDir, filepath.FromSlash(rel)))
			if err != nil {
				t.Fatal(err)
			}
			e, ok := c.entries[rel]
			if !ok {
				if _, err := os.Lstat(filepath.Join(base, filepath.FromSlash(rel))); os.IsNotExist(err) {
					continue // a file the run created is read by the next run
				}
				t.Fatalf("%s: no cache entry", rel)
			}
			if e.hash != sha256.Sum256(data) {
				t.Fatalf("%s: the entry's hash is not the written bytes'", rel)
			}
			want := fresh.probe(&file{rel: rel, index: rel == o.Layout.Index}, data)
			x, _ := json.Marshal(placeless(e.sum))
			y, _ := json.Marshal(placeless(want))
			if !bytes.Equal(x, y) {
				t.Fatalf("%s: cached analysis differs from a fresh parse:\n%s\n---\n%s", rel, x, y)
			}
		}
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
}

// placeless is sum with the place of every unit without shingles cleared
// (it means nothing, and the cache does not keep it) and no shingles as
// nil (the cache reads them back as an empty list).
func placeless(sum *fileSum) fileSum {
	c := *sum
	if len(c.Shingles) == 0 {
		c.Shingles = nil
	}
	c.Units = append([]unitSum(nil), sum.Units...)
	for i := range c.Units {
		if c.Units[i].N == 0 {
			c.Units[i].Off = 0
		}
	}
	return c
}
