package offline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nearMemory writes files of list items built to exercise the incremental
// near-duplicate update: near copies (one word changed), and items that
// are alike only through one boilerplate phrase held by about maxPostings
// items, so that an edit moves that phrase's shingles across the limit
// past which a shingle is no evidence.
type nearMemory struct {
	rng   *rand.Rand
	dir   string
	n     int // items made so far, for distinct names
	items []string
}

const boilerplate = "alpha beta gamma delta epsilon zeta"

func (m *nearMemory) item() string {
	m.n++
	switch k := m.rng.IntN(10); {
	case k < 3:
		// about one item in three carries the boilerplate
		return fmt.Sprintf("x%d %s", m.n, boilerplate)
	case k < 7 && len(m.items) > 0:
		w := strings.Fields(m.items[m.rng.IntN(len(m.items))])
		w[m.rng.IntN(len(w))] = fmt.Sprintf("v%d", m.n)
		return strings.Join(w, " ")
	default:
		w := make([]string, 8+m.rng.IntN(5))
		for i := range w {
			w[i] = fmt.Sprintf("w%d", m.rng.IntN(40))
		}
		w[0] = fmt.Sprintf("u%d", m.n)
		return strings.Join(w, " ")
	}
}

func (m *nearMemory) writeFile(name string, k int) {
	var b strings.Builder
	for i := 0; i < k; i++ {
		it := m.item()
		m.items = append(m.items, it)
		fmt.Fprintf(&b, "- %s\n", it)
	}
	os.WriteFile(filepath.Join(m.dir, name), []byte(b.String()), 0o644)
}

// TestNearIncrementalEqualsFull: over random memories and random edits
// (files rewritten, appended to, added, removed), the near-duplicate
// pairs updated from the previous run's are exactly those computed from
// all the postings, and the update is what the runs mostly use.
func TestNearIncrementalEqualsFull(t *testing.T) {
	ctx := context.Background()
	used, crossed := 0, 0
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			m := &nearMemory{rng: rand.New(rand.NewPCG(seed, 21)), dir: t.TempDir()}
			for f := 0; f < 40; f++ {
				m.writeFile(fmt.Sprintf("f%02d.md", f), 3+m.rng.IntN(5))
			}
			cache := filepath.Join(t.TempDir(), "c.bin")
			o := Options{MemoryDir: m.dir, Now: testNow, Layout: Layout{}, Leads: true, CacheFile: cache}
			if _, err := Run(ctx, o); err != nil {
				t.Fatal(err)
			}
			for step := 0; step < 12; step++ {
				for e := 0; e < 1+m.rng.IntN(3); e++ {
					name := fmt.Sprintf("f%02d.md", m.rng.IntN(46))
					switch m.rng.IntN(4) {
					case 0:
						os.Remove(filepath.Join(m.dir, name))
					case 1:
						f, err := os.OpenFile(filepath.Join(m.dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
						if err != nil {
							t.Fatal(err)
						}
						it := m.item()
						m.items = append(m.items, it)
						fmt.Fprintf(f, "- %s\n", it)
						f.Close()
					default:
						m.writeFile(name, 1+m.rng.IntN(6))
					}
				}
				s, err := scan(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				full, _, err := s.nearScan(ctx)
				if err != nil {
					t.Fatal(err)
				}
				inc, _, ok := s.nearIncremental(ctx, s.cache.pairs, s.changesSince(s.cache.pairs, s.fromCache))
				if ok {
					used++
					if a, b := fmt.Sprint(s.toRels(full)), fmt.Sprint(s.toRels(inc)); a != b {
						t.Fatalf("step %d: incremental pairs differ:\n%s\n---\n%s", step, b, a)
					}
				}
				// How often the boilerplate sits at the limit.
				n := 0
				es, _ := os.ReadDir(m.dir)
				for _, e := range es {
					b, _ := os.ReadFile(filepath.Join(m.dir, e.Name()))
					n += strings.Count(string(b), boilerplate)
				}
				if ok && n > maxPostings-8 && n < maxPostings+8 {
					crossed++
				}
				s.close()
				if _, err := Run(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if used < 60 || crossed < 20 {
		t.Fatalf("the update was used %d times, %d of them near the posting limit", used, crossed)
	}
}

// TestCrossFileDuplicatesAsFirstSeen: the sorted search finds exactly the
// pairs, in the order and up to the cap, of the one pass that remembers
// each key's first unit.
func TestCrossFileDuplicatesAsFirstSeen(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 4))
		s := &state{byRel: map[string]*file{}}
		keys := 5 + rng.IntN(400)
		for f := 0; f < 1+rng.IntN(1500); f++ { // past 4096 units the radix sort runs
			sum := &fileSum{}
			for u := 0; u < rng.IntN(12); u++ {
				sum.Units = append(sum.Units, unitSum{Key: uint64(rng.IntN(keys)) * 0x9e3779b97f4a7c15, Cross: rng.IntN(5) > 0})
			}
			if rng.IntN(10) == 0 {
				sum = nil
			}
			s.addFile(&file{rel: fmt.Sprint(f), sum: sum})
		}
		// The reference: one pass with a map of first occurrences.
		first := map[uint64]unitRef{}
		var want []pairRef
	scan:
		for fi, f := range s.files {
			if f.sum == nil {
				continue
			}
			for ui, u := range f.sum.Units {
				if !u.Cross {
					continue
				}
				ref := unitRef{int32(fi), int32(ui)}
				if a, ok := first[u.Key]; !ok {
					first[u.Key] = ref
				} else if int(a.file) != fi {
					if want = append(want, pairRef{a, ref, 1}); len(want) == maxLeads {
						break scan
					}
				}
			}
		}
		if got := s.crossFileDuplicates(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: %d pairs, want %d:\n%v\n%v", seed, len(got), len(want), got, want)
		}
	}
}

// TestCrossIncrementalEqualsFull: over random memories dense in exact
// copies across files (past the cap of maxLeads pairs, so that the memo
// holds only the first of them) and random edits (files rewritten,
// appended to, added, removed, the index among them), the cross-file
// pairs updated from the previous run's are exactly those found from
// every unit, and the update is what the runs mostly use.
func TestCrossIncrementalEqualsFull(t *testing.T) {
	ctx := context.Background()
	used, capped := 0, 0
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			dir := t.TempDir()
			if seed%2 == 0 {
				// A memo barely longer than what a run reports: updates
				// that find more pairs than it keeps, or lose some.
				defer func(n int) { maxCrossMemo = n }(maxCrossMemo)
				maxCrossMemo = maxLeads + 10
			}
			phrases := 20 + rng.IntN(60)
			write := func(name string, k int, appendTo bool) {
				var b strings.Builder
				for i := 0; i < k; i++ {
					if rng.IntN(4) == 0 {
						fmt.Fprintf(&b, "- a fact of its own number %d here\n", rng.Uint64())
						continue
					}
					fmt.Fprintf(&b, "- the shared fact number %d says the same\n", rng.IntN(phrases))
				}
				flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
				if appendTo {
					flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
				}
				f, err := os.OpenFile(filepath.Join(dir, name), flag, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(b.String())
				f.Close()
			}
			name := func() string {
				if rng.IntN(12) == 0 {
					return "MEMORY.md"
				}
				return fmt.Sprintf("f%02d.md", rng.IntN(66))
			}
			write("MEMORY.md", 4, false)
			for f := 0; f < 60; f++ {
				write(fmt.Sprintf("f%02d.md", f), 2+rng.IntN(8), false)
			}
			cache := filepath.Join(t.TempDir(), "c.bin")
			// The index layout, with no index pointers to add: the files
			// are named in a comment the index's own units do not hold.
			o := Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: cache}
			if _, err := Run(ctx, o); err != nil {
				t.Fatal(err)
			}
			for step := 0; step < 12; step++ {
				for e := 0; e < 1+rng.IntN(3); e++ {
					n := name()
					switch rng.IntN(4) {
					case 0:
						if n != "MEMORY.md" {
							os.Remove(filepath.Join(dir, n))
						}
					case 1:
						write(n, 1+rng.IntN(3), true)
					default:
						write(n, 1+rng.IntN(8), false)
					}
				}
				s, err := scan(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				full, fullComplete := s.crossPairs(maxCrossMemo)
				ch := s.changesSince(s.cache.pairs, s.fromCache)
				inc, complete, ok := s.crossIncremental(s.cache.pairs, ch)
				if ok {
					used++
					if len(full) > maxLeads {
						capped++
					}
					// An exact prefix of every pair, complete only if it is
					// all of them, holding at least what a run reports.
					if len(inc) > len(full) || complete && (!fullComplete || len(inc) != len(full)) || !complete && len(inc) < maxLeads {
						t.Fatalf("step %d: %d pairs (complete %v) against %d (complete %v)", step, len(inc), complete, len(full), fullComplete)
					}
					if a, b := fmt.Sprint(s.toRels(full[:len(inc)])), fmt.Sprint(s.toRels(inc)); a != b {
						t.Fatalf("step %d: incremental pairs differ:\n%s\n---\n%s", step, b, a)
					}
				}
				s.close()
				if _, err := Run(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	t.Logf("the update was used %d times of 144, %d of them past the cap", used, capped)
	if used < 60 || capped < 20 {
		t.Fatalf("the update was used %d times, %d of them past the cap", used, capped)
	}
}

// TestCrossIncrementalPastTheMemo: a change that makes more pairs than
// the memo keeps (a new first holder of a key another file holds three
// hundred times) gives the exact prefix, not one taken for complete.
func TestCrossIncrementalPastTheMemo(t *testing.T) {
	build := func(withFirst bool) *state {
		s := &state{byRel: map[string]*file{}, opts: Options{CacheFile: "c"}}
		if withFirst {
			s.addFile(&file{rel: "f000.md", exists: true, hash: [32]byte{1}, sum: &fileSum{Units: []unitSum{{Key: 7, Cross: true}}}})
		}
		many := &fileSum{}
		for i := 0; i < 300; i++ {
			many.Units = append(many.Units, unitSum{Unit: int32(i), Key: 7, Cross: true})
		}
		s.addFile(&file{rel: "f001.md", exists: true, hash: [32]byte{2}, sum: many})
		return s
	}
	old := build(false)
	pairs, complete := old.crossPairs(maxCrossMemo)
	if len(pairs) != 0 || !complete {
		t.Fatalf("the old memory has %d pairs", len(pairs))
	}
	memo := &pairsMemo{cross: old.toRels(pairs), crossComplete: complete, files: old.fileHashes()}
	s := build(true)
	ch := s.changesSince(memo, func(string, [32]byte) (*fileSum, bool) { return nil, false })
	defer func(n int) { maxCrossMemo = n }(maxCrossMemo)
	for _, limit := range []int{maxLeads + 10, 1000} {
		maxCrossMemo = limit
		full, fullComplete := s.crossPairs(maxCrossMemo)
		inc, incComplete, ok := s.crossIncremental(memo, ch)
		if !ok || incComplete != fullComplete || fmt.Sprint(s.toRels(inc)) != fmt.Sprint(s.toRels(full)) {
			t.Fatalf("limit %d: %d pairs (complete %v, ok %v), want %d (complete %v)", limit, len(inc), incComplete, ok, len(full), fullComplete)
		}
	}
}
