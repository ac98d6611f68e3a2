package offline

import (
	"container/heap"
	"context"
	"slices"
	"sort"
)

// Near-duplicate detection compares word 3-gram shingles (Chinese, Japanese
// and Korean text, which has no spaces, is shingled by character) with the
// Jaccard index. An inverted index over shingles keeps the work proportional
// to the pairs that share something, not to the square of the units: the
// postings are one sorted array (no map of lists), a shingle shared by more
// than maxPostings units is no evidence and is skipped, each unit meets its
// candidates once, and only the best maxPairs pairs are ever held.
const (
	nearThreshold = 0.6
	// maxPostings drops shingles so common that they carry no signal and
	// would make the candidate set quadratic.
	maxPostings = 64
	maxPairs    = 200
	// postingParts slices of the hash space are indexed one at a time.
	postingParts = 8
	postingShift = 61 // 64 - log2(postingParts)
)

// unitRef names a unit of the scan: its file and its place in the file's
// summary.
type unitRef struct{ file, unit int32 }

// pairRef is a lead between two units before their texts are read.
type pairRef struct {
	a, b unitRef
	sim  float64
}

type posting struct {
	sh uint64
	id int32
}

// nearUnits are the near-duplicate candidates of the scan, in file order:
// each unit's ref, shingle set and key.
type nearUnits struct {
	us    []unitRef
	sets  [][]uint64
	keys  []uint64
	total int
}

func (s *state) nearUnits() nearUnits {
	var n nearUnits
	for fi, f := range s.files {
		if f.index || f.sum == nil {
			continue // pointers are short and alike by design
		}
		for ui := range f.sum.Units {
			u := &f.sum.Units[ui]
			if u.N == 0 {
				continue
			}
			n.us = append(n.us, unitRef{int32(fi), int32(ui)})
			n.sets = append(n.sets, f.sum.shingles(u))
			n.keys = append(n.keys, u.Key)
			n.total += int(u.N)
		}
	}
	return n
}

// nearScan returns the most similar pairs of units, best first, with
// references only (the caller reads their texts), from the postings of
// every unit.
func (s *state) nearScan(ctx context.Context) (best []pairRef, err error) {
	nu := s.nearUnits()
	us, sets, keys, total := nu.us, nu.sets, nu.keys, nu.total
	post := sharedPostings(sets, total)
	runOf := make([]int32, len(post)) // where each posting's run starts
	for k := range post {
		if k > 0 && post[k].sh == post[k-1].sh {
			runOf[k] = runOf[k-1]
		} else {
			runOf[k] = int32(k)
		}
	}
	// mine[i] lists the postings of unit i (a counting sort by unit).
	first := make([]int32, len(us)+1)
	for _, p := range post {
		first[p.id+1]++
	}
	for i := 1; i < len(first); i++ {
		first[i] += first[i-1]
	}
	mine := make([]int32, len(post))
	fill := append([]int32(nil), first[:len(us)]...)
	for k, p := range post {
		mine[fill[p.id]] = int32(k)
		fill[p.id]++
	}
	top := &pairHeap{s: s}
	seen := make([]int32, len(us)) // seen[j] == i+1: pair (i, j) already scored
	for i, set := range sets {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for _, k := range mine[first[i]:first[i+1]] {
			for r := int(runOf[k]); r < len(post) && post[r].sh == post[k].sh; r++ {
				j := int(post[r].id)
				if j <= i || seen[j] == int32(i+1) {
					continue
				}
				seen[j] = int32(i + 1)
				if keys[i] == keys[j] {
					continue // exact copies are cross-file leads
				}
				if sim := jaccard(set, sets[j]); sim >= nearThreshold {
					top.offer(pairRef{us[i], us[j], sim})
				}
			}
		}
	}
	out := top.items
	sort.Slice(out, func(i, j int) bool { return s.pairLess(out[i], out[j]) })
	return out, nil
}

// sharedPostings are the postings of the shingles that two to maxPostings
// units share, sorted by hash; total is the number of shingles in sets.
func sharedPostings(sets [][]uint64, total int) []posting {
	// The postings are built a slice of the hash space at a time (by the
	// hash's top bits), so that only 1/postingParts of them is ever held;
	// of each slice only the runs (units sharing a shingle) that can make a
	// pair are kept: two to maxPostings long. Most shingles are either one
	// unit's own or boilerplate shared by thousands, so what is kept is
	// small. The slices, in order, are the whole array sorted by hash.
	var post []posting
	part := make([]posting, 0, total/postingParts+1)
	var spare []posting
	for p := uint64(0); p < postingParts; p++ {
		part = part[:0]
		for i, set := range sets {
			for _, sh := range set {
				if sh>>postingShift == p {
					part = append(part, posting{sh, int32(i)})
				}
			}
		}
		part, spare = sortPostings(part, spare)
		for lo := 0; lo < len(part); {
			hi := lo + 1
			for hi < len(part) && part[hi].sh == part[lo].sh {
				hi++
			}
			if n := hi - lo; n >= 2 && n <= maxPostings {
				post = append(post, part[lo:hi]...)
			}
			lo = hi
		}
	}
	return post
}

// pairLess ranks p before q: more similar first, then by place.
func (s *state) pairLess(p, q pairRef) bool {
	if p.sim != q.sim {
		return p.sim > q.sim
	}
	pa, qa := s.refOf(p.a), s.refOf(q.a)
	if pa.File != qa.File {
		return pa.File < qa.File
	}
	if pa.Line != qa.Line {
		return pa.Line < qa.Line
	}
	pb, qb := s.refOf(p.b), s.refOf(q.b)
	if pb.File != qb.File {
		return pb.File < qb.File
	}
	if pb.Line != qb.Line {
		return pb.Line < qb.Line
	}
	// Two units on one line (an item and the item nested on its first
	// line): their order in the file, so that the ranking is total and the
	// same however the pairs were found.
	if p.a.unit != q.a.unit {
		return p.a.unit < q.a.unit
	}
	return p.b.unit < q.b.unit
}

// refOf is a unit's file and line (its text is read later).
func (s *state) refOf(u unitRef) Ref {
	f := s.files[u.file]
	return Ref{File: f.rel, Line: int(f.sum.Units[u.unit].Line)}
}

// pairHeap keeps the maxPairs best pairs; its root is the worst kept.
type pairHeap struct {
	s     *state
	items []pairRef
}

func (h *pairHeap) Len() int           { return len(h.items) }
func (h *pairHeap) Less(i, j int) bool { return h.s.pairLess(h.items[j], h.items[i]) }
func (h *pairHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *pairHeap) Push(x any)         { h.items = append(h.items, x.(pairRef)) }
func (h *pairHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

func (h *pairHeap) offer(p pairRef) {
	if len(h.items) < maxPairs {
		heap.Push(h, p)
		return
	}
	if h.s.pairLess(p, h.items[0]) {
		h.items[0] = p
		heap.Fix(h, 0)
	}
}

// jaccard is the Jaccard index of two sorted sets of distinct hashes.
func jaccard(a, b []uint64) float64 {
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// sortPostings sorts part by shingle, then unit: a stable radix sort on the
// shingle (the units were appended in order, so equal shingles keep them
// in order), 16 bits a pass, which costs a few linear passes where a
// comparison sort of millions of postings costs seconds. Small parts are
// sorted by comparison. It returns the sorted slice and the other buffer,
// for reuse.
func sortPostings(part, spare []posting) (sorted, other []posting) {
	if len(part) < 4096 {
		slices.SortFunc(part, func(a, b posting) int {
			switch {
			case a.sh < b.sh:
				return -1
			case a.sh > b.sh:
				return 1
			}
			return int(a.id) - int(b.id)
		})
		return part, spare
	}
	if cap(spare) < len(part) {
		spare = make([]posting, len(part))
	}
	src, dst := part, spare[:len(part)]
	var count [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		clear(count[:])
		for _, p := range src {
			count[(p.sh>>shift)&0xffff]++
		}
		if count[(src[0].sh>>shift)&0xffff] == len(src) {
			continue // every posting has this digit: the pass would change nothing
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for _, p := range src {
			d := (p.sh >> shift) & 0xffff
			dst[count[d]] = p
			count[d]++
		}
		src, dst = dst, src
	}
	return src, dst
}
