package offline

import (
	"cmp"
	"context"
	"slices"
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
func (s *state) nearIncremental(ctx context.Context, memo *pairsMemo) (top, all []pairRef, ok bool) {
	if memo == nil || memo.all == nil || s.cache == nil {
		return nil, nil, false
	}
	changed := map[string]bool{}
	var old []*fileSum
	cur := map[string]bool{}
	for _, f := range s.files {
		if f.index || f.sum == nil {
			continue
		}
		cur[f.rel] = true
		if h, ok := memo.files[f.rel]; ok && h == f.hash {
			continue
		}
		changed[f.rel] = true
		if h, ok := memo.files[f.rel]; ok {
			e, ok := s.cache.entries[f.rel]
			if !ok || e.hash != h {
				return nil, nil, false
			}
			old = append(old, e.sum)
		}
	}
	for rel, h := range memo.files {
		if cur[rel] {
			continue
		}
		changed[rel] = true
		e, ok := s.cache.entries[rel]
		if !ok || e.hash != h {
			return nil, nil, false
		}
		old = append(old, e.sum)
	}
	if len(changed) > maxChangedFiles {
		return nil, nil, false
	}
	nu := s.nearUnits()
	isNew := make([]bool, len(nu.us))
	for i, u := range nu.us {
		isNew[i] = changed[s.files[u.file].rel]
	}
	// H: the shingles whose counts may have changed.
	h := shingleSet{}
	for _, sum := range old {
		for k := range sum.Units {
			h.add(sum.shingles(&sum.Units[k]))
		}
	}
	for i, set := range nu.sets {
		if isNew[i] {
			h.add(set)
		}
	}
	// Pass 1: the count of each shingle of H now, and who holds it (up to
	// maxPostings+1: past that it is not eligible, whoever they are).
	holders := map[uint64][]int32{}
	count := h.countIn(nu.sets, func(sh uint64, i int) {
		if l := holders[sh]; len(l) <= maxPostings {
			holders[sh] = append(l, int32(i))
		}
	})
	eligible := func(n int32) bool { return n >= 2 && n <= maxPostings }
	// The memo's pairs of unchanged units, by unit id (nu.us is sorted).
	id := func(u unitRef) (int32, bool) {
		i, ok := slices.BinarySearchFunc(nu.us, u, func(a, b unitRef) int {
			if a.file != b.file {
				return cmp.Compare(a.file, b.file)
			}
			return cmp.Compare(a.unit, b.unit)
		})
		return int32(i), ok
	}
	type pair struct{ i, j int32 }
	pairs := map[pair]float64{}
	olds, good := s.fromRels(memo.all)
	if !good {
		return nil, nil, false
	}
	for k, p := range olds {
		if changed[memo.all[k].a] || changed[memo.all[k].b] {
			continue
		}
		i, ok1 := id(p.a)
		j, ok2 := id(p.b)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		pairs[pair{i, j}] = p.sim
	}
	// Pairs whose shared shingles of H are all ineligible now may have lost
	// their only eligible one: their other shared shingles are counted.
	var doubtful []pair
	h2 := shingleSet{}
	for p := range pairs {
		inH, elig := false, false
		var others []uint64
		eachShared(nu.sets[p.i], nu.sets[p.j], func(sh uint64) {
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
		count2 := h2.countIn(nu.sets, nil)
		for _, p := range doubtful {
			keep := false
			eachShared(nu.sets[p.i], nu.sets[p.j], func(sh uint64) {
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
	// unit, and unchanged pairs that may have become candidates.
	for sh, l := range holders {
		if !eligible(count[sh]) {
			continue
		}
		for x := 0; x < len(l); x++ {
			for y := x + 1; y < len(l); y++ {
				p := pair{l[x], l[y]}
				if _, ok := pairs[p]; ok {
					continue
				}
				if nu.keys[p.i] == nu.keys[p.j] {
					continue // exact copies are cross-file leads
				}
				if sim := jaccard(nu.sets[p.i], nu.sets[p.j]); sim >= nearThreshold {
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
		r := pairRef{nu.us[p.i], nu.us[p.j], sim}
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

// countIn counts, over sets, the units holding each shingle of h, calling
// each (if set) for every holder.
func (h *shingleSet) countIn(sets [][]uint64, each func(sh uint64, unit int)) map[uint64]int32 {
	count := map[uint64]int32{}
	if len(h.m) == 0 {
		return count
	}
	for i, set := range sets {
		for _, sh := range set {
			if h.has(sh) {
				count[sh]++
				if each != nil {
					each(sh, i)
				}
			}
		}
	}
	return count
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
