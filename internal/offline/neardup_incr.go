package offline

import (
	"context"
	"sort"
)

// Limits of the incremental near-duplicate update: past them the pairs
// are computed from all the postings, as on a first run.
const (
	// maxMemoPairs is how many qualifying pairs the cache keeps; a memory
	// with more near duplicates than that is recomputed each run.
	maxMemoPairs = 5000
	// maxChangedFiles is how many changed files an update handles.
	maxChangedFiles = 64
)

// nearIncremental updates the previous run's complete set of qualifying
// near-duplicate pairs (memo) for the files that changed since, instead of
// building and sorting the postings of every unit. It gives exactly
// nearScan's result, or false when it cannot (no complete memo, the old
// analyses of the changed files are not in the cache, too many changes).
//
// A pair qualifies when its units share a shingle held by 2 to maxPostings
// units (an eligible shingle), their keys differ and their Jaccard index
// reaches nearThreshold. When files change, only shingles of their units,
// old (H_old, from the cache's previous analyses) or new, change their
// counts; so one pass over every unit counts just those shingles (H), and:
//   - pairs with a changed unit are dropped, and found again among the
//     units holding an eligible shingle of H (every shingle of a new unit
//     is in H);
//   - an unchanged pair that shares an eligible shingle of H is a
//     candidate now: it is scored (a pair that was not one before may be);
//   - an unchanged pair of the memo that shares shingles of H, none of
//     them eligible now, keeps its place only if another shingle it shares
//     is eligible: those shingles are counted in a second pass.
func (s *state) nearIncremental(ctx context.Context, memo *pairsMemo, ch *changes) (top, all []pairRef, ok bool) {
	if memo == nil || memo.all == nil || ch == nil {
		return nil, nil, false
	}
	// Units are named by unitRef throughout, and every pass runs over the
	// files' own summaries: no array of every unit is built.
	set := func(u unitRef) []uint64 {
		sum := s.files[u.file].sum
		return sum.shingles(&sum.Units[u.unit])
	}
	key := func(u unitRef) uint64 { return s.files[u.file].sum.Units[u.unit].Key }
	// H: the shingles whose counts may have changed.
	h := shingleSet{}
	for _, sum := range ch.old {
		for k := range sum.Units {
			h.add(sum.shingles(&sum.Units[k]))
		}
	}
	for fi, f := range s.files {
		if ch.changed[fi] && !f.index && f.sum != nil {
			for k := range f.sum.Units {
				h.add(f.sum.shingles(&f.sum.Units[k]))
			}
		}
	}
	// Pass 1: the count of each shingle of H now, and who holds it (up to
	// maxPostings+1: past that it is not eligible, whoever they are).
	held := s.holdersIn(&h)
	count := make(map[uint64]int32, len(held))
	for sh, x := range held {
		count[sh] = x.n
	}
	eligible := func(n int32) bool { return n >= 2 && n <= maxPostings }
	type pair struct{ a, b unitRef }
	pairs := map[pair]float64{}
	olds, good := s.fromRels(ch.unchanged(memo.all))
	if !good {
		return nil, nil, false
	}
	for _, p := range olds {
		if !s.nearCandidate(p.a) || !s.nearCandidate(p.b) {
			return nil, nil, false // not the memo of these summaries
		}
		pairs[pair{p.a, p.b}] = p.sim
	}
	// Pairs whose shared shingles of H are all ineligible now may have lost
	// their only eligible one: their other shared shingles are counted.
	var doubtful []pair
	h2 := shingleSet{}
	for p := range pairs {
		inH, elig := false, false
		var others []uint64
		eachShared(set(p.a), set(p.b), func(sh uint64) {
			if h.has(sh) {
				inH = true
				elig = elig || eligible(count[sh])
			} else {
				others = append(others, sh)
			}
		})
		if inH && !elig {
			doubtful = append(doubtful, p)
			h2.add(others)
		}
	}
	if len(doubtful) > 0 {
		count2 := s.countIn(&h2)
		for _, p := range doubtful {
			keep := false
			eachShared(set(p.a), set(p.b), func(sh uint64) {
				if !h.has(sh) && eligible(count2[sh]) {
					keep = true
				}
			})
			if !keep {
				delete(pairs, p)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, false
	}
	// Candidates through an eligible shingle of H: every pair with a new
	// unit, and unchanged pairs that may have become candidates. Holders
	// are in file order, so a pair's first unit is the earlier, as
	// nearScan has it.
	for _, x := range held {
		if !eligible(x.n) {
			continue
		}
		l := x.units
		for x := 0; x < len(l); x++ {
			for y := x + 1; y < len(l); y++ {
				p := pair{l[x], l[y]}
				if _, ok := pairs[p]; ok {
					continue
				}
				if key(p.a) == key(p.b) {
					continue // exact copies are cross-file leads
				}
				if sim := jaccard(set(p.a), set(p.b)); sim >= nearThreshold {
					pairs[p] = sim
				}
			}
		}
	}
	if len(pairs) > maxMemoPairs {
		all = nil
	} else {
		all = make([]pairRef, 0, len(pairs))
	}
	tp := &pairHeap{s: s}
	for p, sim := range pairs {
		r := pairRef{p.a, p.b, sim}
		tp.offer(r)
		if all != nil {
			all = append(all, r)
		}
	}
	out := tp.items
	sort.Slice(out, func(i, j int) bool { return s.pairLess(out[i], out[j]) })
	if all != nil {
		sort.Slice(all, func(i, j int) bool { return s.pairLess(all[i], all[j]) })
	}
	return out, all, true
}

// nearCandidate reports a unit nearScan would index: outside the index,
// with shingles.
func (s *state) nearCandidate(u unitRef) bool {
	f := s.files[u.file]
	return !f.index && f.sum != nil && u.unit >= 0 && int(u.unit) < len(f.sum.Units) && f.sum.Units[u.unit].N > 0
}

// held is how many near-duplicate candidates hold a shingle, and the
// first maxPostings+1 of them in file order (past that the shingle is not
// eligible, whoever they are).
type held struct {
	n     int32
	units []unitRef
}

// holdersIn is, for each shingle of h, who holds it among the scan's
// near-duplicate candidates: one map access per shingle held.
func (s *state) holdersIn(h *shingleSet) map[uint64]*held {
	out := make(map[uint64]*held, len(h.m))
	for sh := range h.m {
		out[sh] = &held{}
	}
	if len(h.m) == 0 {
		return out
	}
	for fi, f := range s.files {
		if f.index || f.sum == nil {
			continue
		}
		for ui := range f.sum.Units {
			u := &f.sum.Units[ui]
			for _, sh := range f.sum.shingles(u) {
				if h.bits[sh&0xffff>>6]&(1<<(sh&63)) == 0 {
					continue
				}
				if x := out[sh]; x != nil {
					x.n++
					if len(x.units) <= maxPostings {
						x.units = append(x.units, unitRef{int32(fi), int32(ui)})
					}
				}
			}
		}
	}
	return out
}

// countIn counts, over every near-duplicate candidate of the scan, the
// units holding each shingle of h.
func (s *state) countIn(h *shingleSet) map[uint64]int32 {
	count := make(map[uint64]int32, len(h.m))
	for sh, x := range s.holdersIn(h) {
		count[sh] = x.n
	}
	return count
}

// shingleSet is a small set of shingles with a bitmap in front of its map,
// so that testing the millions of shingles of a memory against it is
// mostly one memory access each.
type shingleSet struct {
	bits [1 << 10]uint64
	m    map[uint64]struct{}
}

func (h *shingleSet) add(set []uint64) {
	if h.m == nil {
		h.m = map[uint64]struct{}{}
	}
	for _, sh := range set {
		h.bits[sh&0xffff>>6] |= 1 << (sh & 63)
		h.m[sh] = struct{}{}
	}
}

func (h *shingleSet) has(sh uint64) bool {
	if h.bits[sh&0xffff>>6]&(1<<(sh&63)) == 0 {
		return false
	}
	_, ok := h.m[sh]
	return ok
}

// eachShared calls fn for every shingle two sorted sets share.
func eachShared(a, b []uint64, fn func(uint64)) {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			fn(a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
}
