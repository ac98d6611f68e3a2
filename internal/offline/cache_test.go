package offline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runJSON runs the engine with leads over dir and returns the report as
// JSON, so that two runs compare byte for byte.
func runJSON(t *testing.T, dir, cache string) []byte {
	t.Helper()
	rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: cache})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameTree fails unless dirs a and b hold the same files and bytes.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	ta, tb := readAll(t, a), readAll(t, b)
	if len(ta) != len(tb) {
		t.Fatalf("%d files against %d", len(ta), len(tb))
	}
	for k, v := range ta {
		if !bytes.Equal(v, tb[k]) {
			t.Fatalf("%s differs:\n%s\n---\n%s", k, v, tb[k])
		}
	}
}

// TestCacheNeverChangesAResult: over random memories, a run that takes
// what it can from the cache (after the previous run's writes and one hand
// edit) reports and writes exactly what a run without a cache does, and so
// does a run over a cache that is corrupt, truncated, or holds analyses of
// other bytes under the same names.
func TestCacheNeverChangesAResult(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			base := t.TempDir()
			if err := randomMemory(rng, base); err != nil {
				t.Fatal(err)
			}
			// Near duplicates and drift-free leads across files.
			os.WriteFile(filepath.Join(base, "near.md"), []byte("- the deploy runs from main after a review by two people\n- ship it\n"), 0o644)
			os.WriteFile(filepath.Join(base, "near2.md"), []byte("- the deploy runs from main after a review by three people\n"), 0o644)
			cache := filepath.Join(t.TempDir(), "state", "offline.cache")
			withCache, without := t.TempDir(), t.TempDir()
			copyTree(t, base, withCache)
			copyTree(t, base, without)
			if a, b := runJSON(t, withCache, cache), runJSON(t, without, ""); !bytes.Equal(a, b) {
				t.Fatalf("first run differs with a cache:\n%s\n---\n%s", a, b)
			}
			// One hand edit, the same in both.
			edit := fmt.Sprintf("- Deploys run from main after review.\n- added by hand %d\n", seed)
			for _, d := range []string{withCache, without} {
				f, err := os.OpenFile(filepath.Join(d, "t0.md"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(edit)
				f.Close()
			}
			if a, b := runJSON(t, withCache, cache), runJSON(t, without, ""); !bytes.Equal(a, b) {
				t.Fatalf("re-run differs with a cache:\n%s\n---\n%s", a, b)
			}
			sameTree(t, withCache, without)
			if n := cachedFiles(t, withCache, cache); n < 2 {
				t.Fatalf("only %d files taken from the cache", n)
			}
			if _, err := os.Stat(cache); err != nil {
				t.Fatalf("no cache written: %v", err)
			}
			if entries, _ := os.ReadDir(withCache); len(entries) != len(mustReadDir(t, without)) {
				t.Fatal("the cache left something in the memory dir")
			}

			// A damaged cache: every way of breaking it gives the same run.
			good, err := os.ReadFile(cache)
			if err != nil {
				t.Fatal(err)
			}
			damaged := map[string][]byte{
				"flipped":   flip(good, rng.IntN(len(good))),
				"truncated": good[:len(good)/2],
				"empty":     nil,
				"garbage":   []byte(strings.Repeat("dream offline cache\n", 40)),
			}
			for name, bad := range damaged {
				for _, d := range []string{withCache, without} {
					os.WriteFile(filepath.Join(d, "t1.md"), []byte("## 2026-11-20\n\n- Yesterday we shipped "+name+".\n- Yesterday we shipped "+name+".\n"), 0o644)
				}
				if err := os.WriteFile(cache, bad, 0o600); err != nil {
					t.Fatal(err)
				}
				if a, b := runJSON(t, withCache, cache), runJSON(t, without, ""); !bytes.Equal(a, b) {
					t.Fatalf("%s cache changed the run:\n%s\n---\n%s", name, a, b)
				}
				sameTree(t, withCache, without)
			}
			// A damaged delta over a good base, and a delta of another
			// base: the same run again.
			os.WriteFile(cache, good, 0o600)
			for _, d := range []string{withCache, without} {
				os.WriteFile(filepath.Join(d, "t2.md"), []byte("- The delta is written now.\n"), 0o644)
			}
			runJSON(t, withCache, cache)
			runJSON(t, without, "")
			delta, err := os.ReadFile(cache + ".delta")
			if err != nil {
				t.Fatalf("no delta written after a one-file edit: %v", err)
			}
			other := append([]byte(nil), delta...)
			copy(other[len(cacheMagic)+2+len(LayoutFor("").fingerprint())+1:], "otherbas") // another base id
			for name, bad := range map[string][]byte{
				"flipped delta":   flip(delta, rng.IntN(len(delta))),
				"truncated delta": delta[:len(delta)/2],
				"garbage delta":   []byte(strings.Repeat("dream offline cache\n", 40)),
				"another base":    resum(other),
			} {
				for _, d := range []string{withCache, without} {
					os.WriteFile(filepath.Join(d, "t2.md"), []byte("## 2026-11-20\n\n- Yesterday we shipped the "+name+".\n- Yesterday we shipped the "+name+".\n"), 0o644)
				}
				if err := os.WriteFile(cache+".delta", bad, 0o600); err != nil {
					t.Fatal(err)
				}
				if a, b := runJSON(t, withCache, cache), runJSON(t, without, ""); !bytes.Equal(a, b) {
					t.Fatalf("%s changed the run:\n%s\n---\n%s", name, a, b)
				}
				sameTree(t, withCache, without)
			}
		})
	}
}

// TestCacheEntryForOtherBytesIsNotUsed: a cache made from other contents of
// the same file names (a stale cache, or one copied from another memory)
// is checked against each file's hash and never supplies its analysis.
func TestCacheEntryForOtherBytesIsNotUsed(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "c")
	a := t.TempDir()
	os.WriteFile(filepath.Join(a, "x.md"), []byte("- alpha beta gamma delta epsilon zeta\n"), 0o644)
	os.WriteFile(filepath.Join(a, "y.md"), []byte("- one two three four five six seven\n"), 0o644)
	runJSON(t, a, cache)
	// Same names and sizes, other words: now x and y are near-duplicates.
	b, c := t.TempDir(), t.TempDir()
	for _, d := range []string{b, c} {
		os.WriteFile(filepath.Join(d, "x.md"), []byte("- alpha beta gamma delta epsilon zeta\n"), 0o644)
		os.WriteFile(filepath.Join(d, "y.md"), []byte("- alpha beta gamma delta epsilon thet\n"), 0o644)
	}
	got, want := runJSON(t, b, cache), runJSON(t, c, "")
	if !bytes.Equal(got, want) {
		t.Fatalf("stale cache changed the leads:\n%s\n---\n%s", got, want)
	}
	if !bytes.Contains(want, []byte(`"near_duplicates": [`)) {
		t.Fatalf("test memory has no near duplicate:\n%s", want)
	}
}

// TestCachePathIsInTheStateDir: the cache is named under the state dir,
// one per memory, never beside the memory.
func TestCachePathIsInTheStateDir(t *testing.T) {
	state, mem := t.TempDir(), t.TempDir()
	p := CachePath(state, mem)
	if !strings.HasPrefix(p, state+string(filepath.Separator)) || strings.HasPrefix(p, mem) {
		t.Fatalf("cache path %s", p)
	}
	if CachePath(state, mem+"2") == p {
		t.Fatal("two memories share a cache")
	}
}

// resum gives a cache file body (without its checksum) a good checksum
// again.
func resum(b []byte) []byte {
	body := b[:len(b)-4]
	return binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, crcTable()))
}

func flip(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0x20
	return out
}

func mustReadDir(t *testing.T, d string) []os.DirEntry {
	es, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// cachedFiles is how many files a scan of dir takes from the cache.
func cachedFiles(t *testing.T, dir, cache string) int {
	t.Helper()
	s, err := scan(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), CacheFile: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	n := 0
	for _, f := range s.files {
		if f.cached {
			n++
		}
	}
	return n
}

// TestCacheStatNeverChangesAResult: the stats that spare reading a file
// are never taken for its bytes when they changed. Over random memories
// whose cache holds trusted stats, every way of changing a file that a
// stat might hide (an edit of the same size with its mtime put back, a
// same-size replacement by rename with the old mtime, a touch, an append)
// gives a run that reports and writes exactly what a run without a cache
// does, and the files nobody touched are not read at all.
func TestCacheStatNeverChangesAResult(t *testing.T) {
	dirtyIndex := 0
	defer func() {
		if dirtyIndex == 6 {
			t.Error("every index held work: the unread index was never tested")
		}
	}()
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 5))
			base := t.TempDir()
			if err := randomTree(rng, base); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(base, "near.md"), []byte("- the deploy runs from main after a review by two people\n- ship it\n"), 0o644)
			os.WriteFile(filepath.Join(base, "near2.md"), []byte("- the deploy runs from main after a review by three people\n"), 0o644)
			os.WriteFile(filepath.Join(base, "quiet.md"), []byte("# Quiet\n\n- The release train leaves on Thursdays.\n- Owner: Ana Souza\n"), 0o644)
			pair := newCachePair(t, base)
			cache, withCache, without := pair.cache, pair.withCache, pair.without
			check := func(step string) {
				t.Helper()
				pair.check(t, step)
				// The cache written back (entries of unread files copied as
				// they were) still reads.
				if loadCache(cache, LayoutFor("").fingerprint(), false) == nil {
					t.Fatalf("%s: the cache written does not read back", step)
				}
			}
			check("first")
			// Past the racy window, a run records stats it may trust.
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("second")
			if n := unreadFiles(t, withCache, cache); n < 3 {
				t.Fatalf("only %d files vouched for by their stat", n)
			}
			c := loadCache(cache, LayoutFor("").fingerprint(), false)
			if c == nil {
				t.Fatal("no cache")
			}
			if e, ok := c.entry("MEMORY.md", -1); !ok {
				t.Fatal("no entry for the index")
			} else if !e.sum.Dirty && !unread(t, withCache, cache, "MEMORY.md") {
				t.Fatal("the index was read though it did not change and holds no work")
			} else if e.sum.Dirty {
				dirtyIndex++
			}
			both := func(fn func(dir string)) {
				fn(withCache)
				fn(without)
			}
			// An edit of the same size, its mtime put back.
			both(func(d string) {
				p := filepath.Join(d, "quiet.md")
				info, _ := os.Stat(p)
				os.WriteFile(p, []byte("# Quiet\n\n- The release train leaves on Thursdays.\n- The release train leaves on Thursdays.\n"[:info.Size()]), 0o644)
				os.Chtimes(p, info.ModTime(), info.ModTime())
			})
			check("same-size edit, mtime restored")
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("settle")
			// A same-size replacement by rename, with the old mtime.
			both(func(d string) {
				p := filepath.Join(d, "near2.md")
				info, _ := os.Stat(p)
				tmp := filepath.Join(d, ".swap")
				os.WriteFile(tmp, []byte("- the deploy runs from main after a review by three people\n"[:info.Size()-6]+"Yest.\n"), 0o644)
				os.Chtimes(tmp, info.ModTime(), info.ModTime())
				if err := os.Rename(tmp, p); err != nil {
					t.Fatal(err)
				}
			})
			check("replaced by rename")
			// A touch: the bytes are the same, the entry still serves.
			both(func(d string) {
				later := time.Now().Add(time.Hour)
				os.Chtimes(filepath.Join(d, "near.md"), later, later)
			})
			check("touched")
			// An append.
			both(func(d string) {
				f, err := os.OpenFile(filepath.Join(d, "near.md"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString("- Yesterday the train left late.\n- ship it\n")
				f.Close()
			})
			check("appended")
			// A new topic: the index, taken from the cache, is read to
			// get its pointer.
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("settle again")
			both(func(d string) {
				os.WriteFile(filepath.Join(d, "fresh.md"), []byte("---\nname: fresh\ndescription: a new topic\n---\n\n- Yesterday the fresh topic started.\n"), 0o644)
			})
			check("new topic")
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("settle once more")
			// A nested file (stat through its own directory) edited, same
			// size, mtime put back; and one folder swapped for another
			// holding the same names with other bytes.
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("settle before the folders")
			both(func(d string) {
				p := filepath.Join(d, "projects", "deep", "n.md")
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte("- The deep note says one thing.\n"), 0o644)
				os.MkdirAll(filepath.Join(d, "swap", "a"), 0o755)
				os.WriteFile(filepath.Join(d, "swap", "a", "s.md"), []byte("- The swapped note, first.\n"), 0o644)
			})
			check("nested files")
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("nested files settled")
			if !unread(t, withCache, cache, "projects/deep/n.md") {
				t.Fatal("a nested file was read though its stat vouched for it")
			}
			both(func(d string) {
				p := filepath.Join(d, "projects", "deep", "n.md")
				info, _ := os.Stat(p)
				os.WriteFile(p, []byte("- The deep note says one thing.\n- Yesterday it said another.\n"[:info.Size()]), 0o644)
				os.Chtimes(p, info.ModTime(), info.ModTime())
				a := filepath.Join(d, "swap", "a")
				os.MkdirAll(filepath.Join(d, "swap", "b"), 0o755)
				os.WriteFile(filepath.Join(d, "swap", "b", "s.md"), []byte("- The swapped note, other.\n"), 0o644)
				sinfo, _ := os.Stat(filepath.Join(a, "s.md"))
				os.Chtimes(filepath.Join(d, "swap", "b", "s.md"), sinfo.ModTime(), sinfo.ModTime())
				os.Rename(a, filepath.Join(d, "swap", "old"))
				os.Rename(filepath.Join(d, "swap", "b"), a)
			})
			check("nested edit, folder swapped")
			// The index touched: its stat no longer vouches, its bytes
			// hash as its entry's, whose summary serves unparsed.
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("settle before the touch")
			both(func(d string) {
				later := time.Now().Add(time.Hour)
				os.Chtimes(filepath.Join(d, "MEMORY.md"), later, later)
			})
			check("index touched")
			// The index edited by hand, same size, mtime put back.
			both(func(d string) {
				p := filepath.Join(d, "MEMORY.md")
				info, _ := os.Stat(p)
				b, _ := os.ReadFile(p)
				b = bytes.Replace(b, []byte("[Topic 0](t0.md)"), []byte("[Topic 0](t9.md)"), 1)
				os.WriteFile(p, b, 0o644)
				os.Chtimes(p, info.ModTime(), info.ModTime())
			})
			check("index edited, mtime restored")
		})
	}
}

// unreadFiles is how many files a scan of dir takes from the cache on
// their stat alone.
func unreadFiles(t *testing.T, dir, cache string) int {
	t.Helper()
	s, err := scan(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), CacheFile: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	n := 0
	for _, f := range s.files {
		if f.unread {
			n++
		}
	}
	return n
}

// TestSortPostings: the radix sort orders postings exactly as the
// comparison sort (by shingle, then unit), on sizes either side of the
// switch between them.
func TestSortPostings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 100, 4095, 4096, 50000} {
		var in []posting
		for i := 0; i < n; i++ {
			sh := rng.Uint64()
			if rng.IntN(3) == 0 && i > 0 {
				sh = in[rng.IntN(i)].sh // shared shingles
			}
			in = append(in, posting{sh, int32(i)})
		}
		want := append([]posting(nil), in...)
		slices.SortFunc(want, func(a, b posting) int {
			if c := cmp.Compare(a.sh, b.sh); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		got, _ := sortPostings(append([]posting(nil), in...), nil)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: radix sort differs", n)
		}
	}
}

// unread reports whether a scan of dir takes rel from the cache on its
// stat alone.
func unread(t *testing.T, dir, cache, rel string) bool {
	t.Helper()
	s, err := scan(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), CacheFile: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	f := s.byRel[rel]
	return f == nil || f.unread
}

// TestCacheUnreadIndex: an index taken from the cache unread still gives
// every result its parse gave: the budget note of an index over budget
// with pointers alone, its dangling pointers, the files and folders it
// names (so nothing named is pointed to again) and its comments'
// exclusions; and a new topic still gets its pointer.
func TestCacheUnreadIndex(t *testing.T) {
	base := t.TempDir()
	var idx strings.Builder
	idx.WriteString("# Memory\n\n<!-- drafts/ and scratch.md are not indexed on purpose -->\n\nSee `notes/` and ops.md for the rest.\n\n")
	for i := 0; i < 230; i++ {
		fmt.Fprintf(&idx, "- [Area %d](area-%d.md) — the staging cluster %d\n", i, i, i)
	}
	os.WriteFile(filepath.Join(base, "MEMORY.md"), []byte(idx.String()), 0o644)
	for _, d := range []string{"notes", "drafts"} {
		os.MkdirAll(filepath.Join(base, d), 0o755)
		os.WriteFile(filepath.Join(base, d, "x.md"), []byte("- The cache is warmed from the primary.\n"), 0o644)
	}
	os.WriteFile(filepath.Join(base, "ops.md"), []byte("# Ops\n\n- Restart the worker after a config change.\n"), 0o644)
	os.WriteFile(filepath.Join(base, "scratch.md"), []byte("- scratch notes nobody indexes\n"), 0o644)
	for i := 0; i < 5; i++ {
		os.WriteFile(filepath.Join(base, fmt.Sprintf("area-%d.md", i)), []byte(fmt.Sprintf("# Area %d\n\n- The release train %d leaves on Thursdays.\n", i, i)), 0o644)
	}
	pair := newCachePair(t, base)
	cache, withCache, without := pair.cache, pair.withCache, pair.without
	check := func(step string) []byte { t.Helper(); return pair.check(t, step) }
	check("first")
	time.Sleep(racyWindow + 50*time.Millisecond)
	check("second")
	if !unread(t, withCache, cache, "MEMORY.md") {
		t.Fatal("the index was read")
	}
	before, _ := os.Stat(cache)
	rep := check("unread index")
	if after, _ := os.Stat(cache); !os.SameFile(before, after) {
		t.Error("a run that changed nothing wrote the cache again")
	}
	for _, want := range []string{"over budget", `"text": "area-5.md"`} {
		if !bytes.Contains(rep, []byte(want)) {
			t.Fatalf("the run lost %q:\n%s", want, rep)
		}
	}
	for _, d := range []string{withCache, without} {
		os.WriteFile(filepath.Join(d, "fresh.md"), []byte("# Fresh\n\n- A new topic.\n"), 0o644)
	}
	if rep := check("new topic"); !bytes.Contains(rep, []byte("added index pointer")) {
		t.Fatalf("no pointer for the new topic:\n%s", rep)
	}
}

// TestCacheWrittenIndex: the dream right after one that wrote the index
// (pointers added, lines moved out of an index over budget) takes the
// index's summary from the entry the writing run made for the bytes it
// wrote, checked by their hash, without parsing it, and still reports and
// writes exactly what a run without a cache does, a hand edit of the
// index included.
func TestCacheWrittenIndex(t *testing.T) {
	for _, movable := range []bool{false, true} {
		t.Run(fmt.Sprint("movable=", movable), func(t *testing.T) {
			base := t.TempDir()
			var idx strings.Builder
			idx.WriteString("# Memory\n\n<!-- drafts/ is not indexed on purpose -->\n\n")
			n := 230
			if movable {
				n = 170 // within the budget once the notes (and a blank line each) are moved
			}
			for i := 0; i < n; i++ {
				fmt.Fprintf(&idx, "- [Area %d](area-%d.md) — the staging cluster %d\n", i, i, i)
				if movable && i%10 == 0 {
					fmt.Fprintf(&idx, "\nA note of the user's own about area %d, which an agent reads every turn.\n\n", i)
				}
			}
			os.WriteFile(filepath.Join(base, "MEMORY.md"), []byte(idx.String()), 0o644)
			os.MkdirAll(filepath.Join(base, "drafts"), 0o755)
			os.WriteFile(filepath.Join(base, "drafts", "x.md"), []byte("- The cache is warmed from the primary.\n"), 0o644)
			for i := 0; i < 5; i++ {
				os.WriteFile(filepath.Join(base, fmt.Sprintf("area-%d.md", i)), []byte(fmt.Sprintf("# Area %d\n\n- The release train %d leaves on Thursdays.\n", i, i)), 0o644)
			}
			os.WriteFile(filepath.Join(base, "unindexed.md"), []byte("# Unindexed\n\n- Nobody pointed to this yet.\n"), 0o644)
			pair := newCachePair(t, base)
			cache, withCache, without := pair.cache, pair.withCache, pair.without
			check := func(step string) []byte { t.Helper(); return pair.check(t, step) }
			if rep := check("first"); !bytes.Contains(rep, []byte("added index pointer")) || movable != bytes.Contains(rep, []byte(`"kind": "index_budget"`)) {
				t.Fatalf("the first run did not do what the test needs:\n%s", rep)
			}
			// Right after: no stat vouches for the index, its hash does.
			s, err := scan(context.Background(), Options{MemoryDir: withCache, Now: testNow, Layout: LayoutFor(""), CacheFile: cache})
			if err != nil {
				t.Fatal(err)
			}
			ix := s.byRel["MEMORY.md"]
			if ix.unread || !ix.cached || ix.doc != nil || ix.idx == nil || !ix.idx.BudgetKnown {
				t.Fatalf("the written index was parsed again (unread %v cached %v parsed %v)", ix.unread, ix.cached, ix.doc != nil)
			}
			s.close()
			rep := check("right after")
			if !bytes.Contains(rep, []byte("over budget")) && !movable {
				t.Fatalf("the budget note was lost:\n%s", rep)
			}
			// A hand edit of the index, same size, mtime put back, at once.
			for _, d := range []string{withCache, without} {
				p := filepath.Join(d, "MEMORY.md")
				info, _ := os.Stat(p)
				b, _ := os.ReadFile(p)
				b = bytes.Replace(b, []byte("[Area 1](area-1.md)"), []byte("[Area 1](area-9.md)"), 1)
				os.WriteFile(p, b, 0o644)
				os.Chtimes(p, info.ModTime(), info.ModTime())
			}
			check("index edited")
			time.Sleep(racyWindow + 50*time.Millisecond)
			check("settled")
		})
	}
}

// TestCacheDelta: a run that changed a few files writes a delta beside the
// base, not the base again; one that changed many writes the base and no
// delta; files removed stay removed; and every run reports and writes
// what a run without a cache does.
func TestCacheDelta(t *testing.T) {
	base := t.TempDir()
	for i := 0; i < 120; i++ {
		os.WriteFile(filepath.Join(base, fmt.Sprintf("f%03d.md", i)), []byte(fmt.Sprintf("# F%d\n\n- The shared rule of every file says the same.\n- Fact %d of its own, kept here.\n", i, i)), 0o644)
	}
	pair := newCachePair(t, base)
	cache, withCache, without := pair.cache, pair.withCache, pair.without
	both := func(fn func(dir string)) {
		fn(withCache)
		fn(without)
	}
	check := func(step string) { t.Helper(); pair.check(t, step) }
	stat := func(p string) os.FileInfo {
		info, err := os.Stat(p)
		if err != nil {
			return nil
		}
		return info
	}
	// The files aged past the racy window first, so that the first run
	// records their stats and the next writes only what changed.
	time.Sleep(racyWindow + 50*time.Millisecond)
	check("first")
	time.Sleep(racyWindow + 50*time.Millisecond)
	check("settle")
	b0 := stat(cache)
	both(func(d string) {
		os.WriteFile(filepath.Join(d, "f007.md"), []byte("# F7\n\n- The shared rule of every file says the same.\n- Fact 7, edited by hand.\n"), 0o644)
	})
	check("one edit")
	if b := stat(cache); !os.SameFile(b0, b) || stat(cache+".delta") == nil {
		t.Fatal("a one-file edit rewrote the base, or wrote no delta")
	}
	both(func(d string) {
		os.Remove(filepath.Join(d, "f011.md"))
		os.WriteFile(filepath.Join(d, "new.md"), []byte("- A new file with the shared rule of every file says the same.\n"), 0o644)
	})
	check("a file removed, one added")
	if c := loadCache(cache, LayoutFor("").fingerprint(), false); c == nil {
		t.Fatal("the cache does not read")
	} else if _, ok := c.entry("f011.md", -1); ok {
		t.Fatal("the removed file is still in the cache")
	}
	time.Sleep(racyWindow + 50*time.Millisecond)
	check("settle again")
	both(func(d string) {
		for i := 20; i < 100; i++ {
			f, _ := os.OpenFile(filepath.Join(d, fmt.Sprintf("f%03d.md", i)), os.O_APPEND|os.O_WRONLY, 0)
			fmt.Fprintf(f, "- Another fact %d.\n", i)
			f.Close()
		}
	})
	check("many edits")
	if b := stat(cache); os.SameFile(b0, b) || stat(cache+".delta") != nil {
		t.Fatal("many edits did not write the base again, or left a delta")
	}
	time.Sleep(racyWindow + 50*time.Millisecond)
	check("settled after the base")
	if n := unreadFiles(t, withCache, cache); n < 100 {
		t.Fatalf("only %d files vouched for by their stat after the base was written", n)
	}
}

// cachePair is one memory in two copies that every step runs the engine
// over, one with a cache and one without: whatever the cache spares, the
// two must report and write the same.
type cachePair struct{ cache, withCache, without string }

func newCachePair(t *testing.T, base string) cachePair {
	t.Helper()
	p := cachePair{cache: filepath.Join(t.TempDir(), "state", "offline.cache"), withCache: t.TempDir(), without: t.TempDir()}
	copyTree(t, base, p.withCache)
	copyTree(t, base, p.without)
	return p
}

// check runs step over both copies and returns the report of the cached
// one, failing when the reports or the trees differ.
func (p cachePair) check(t *testing.T, step string) []byte {
	t.Helper()
	a, b := runJSON(t, p.withCache, p.cache), runJSON(t, p.without, "")
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: run differs with a cache:\n%s\n---\n%s", step, a, b)
	}
	sameTree(t, p.withCache, p.without)
	return a
}
