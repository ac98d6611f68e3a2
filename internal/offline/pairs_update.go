package offline

import (
	"cmp"
	"slices"
	"strings"
)

// changes are the files of this scan whose summaries differ from those a
// pairs memo was found in, with the summaries the memo saw for them
// (files changed or gone): what an incremental update of the pairs needs.
type changes struct {
	// changed is indexed by file position; rels are the changed files
	// and the files gone, by path.
	changed []bool
	rels    map[string]bool
	old     []*fileSum
}

// changesSince compares the scan with the files the memo was found in.
// oldSum returns the summary rel had when its bytes hashed to h, or false
// when it is not known (then nothing can be updated: the caller computes
// the pairs afresh). It returns nil past maxChangedFiles changes.
func (s *state) changesSince(memo *pairsMemo, oldSum func(rel string, h [32]byte) (*fileSum, bool)) *changes {
	if memo == nil {
		return nil
	}
	ch := &changes{changed: make([]bool, len(s.files)), rels: map[string]bool{}}
	n := 0
	seen := 0
	for fi, f := range s.files {
		if f.sum == nil {
			continue
		}
		h, ok := memo.fileHash(f.rel, fi)
		if ok {
			seen++
			if h == f.hash {
				continue
			}
		}
		ch.changed[fi] = true
		ch.rels[f.rel] = true
		if n++; n > maxChangedFiles {
			return nil
		}
		if ok {
			sum, known := oldSum(f.rel, h)
			if !known {
				return nil
			}
			ch.old = append(ch.old, sum)
		}
	}
	if seen < memo.fileCount() {
		// Files the memo saw that the scan does not have (or has no
		// summary of): their units are gone.
		ok := true
		memo.eachFile(func(rel string, h [32]byte, _ int) {
			if f := s.byRel[rel]; !ok || f != nil && f.sum != nil {
				return
			}
			ch.rels[rel] = true
			if n++; n > maxChangedFiles {
				ok = false
				return
			}
			sum, known := oldSum(rel, h)
			if !known {
				ok = false
				return
			}
			ch.old = append(ch.old, sum)
		})
		if !ok {
			return nil
		}
	}
	return ch
}

// unchanged are the pairs of rs between files that did not change.
func (ch *changes) unchanged(rs []pairRel) []pairRel {
	out := make([]pairRel, 0, len(rs))
	for _, r := range rs {
		if !ch.rels[r.a] && !ch.rels[r.b] {
			out = append(out, r)
		}
	}
	return out
}

// fromCache is the summary the cache holds for rel's bytes hashed to h.
func (s *state) fromCache(rel string, h [32]byte) (*fileSum, bool) {
	e, ok := s.cache.entry(rel, -1)
	if !ok || e.hash != h || e.sum == nil {
		return nil, false
	}
	return e.sum, true
}

// crossIncremental updates the memo's cross-file pairs for the changes,
// giving exactly crossPairs' result (a prefix of every pair in order, and
// whether it is all of them), or false when it cannot.
//
// A pair is a unit and the first unit, in file order, of its key in
// another file, the pairs ordered by their later unit. Only keys held by
// a changed unit, before or after the change (K), can gain or lose pairs;
// so the pairs of K are found again in one pass over every unit's key,
// and the memo's pairs of other keys stay. The memo holds every pair up to
// its last one (P) and none after, so the merged list is exact up to P
// (all of it when the memo was complete); that exact prefix, at most
// maxCrossMemo long, is the new memo, and it serves while it holds at
// least the maxLeads pairs a run reports.
func (s *state) crossIncremental(memo *pairsMemo, ch *changes) (pairs []pairRef, complete, ok bool) {
	if memo == nil || ch == nil {
		return nil, false, false
	}
	k := map[uint64]bool{}
	for _, sum := range ch.old {
		for _, u := range sum.Units {
			if u.Cross {
				k[u.Key] = true
			}
		}
	}
	for fi, f := range s.files {
		if ch.changed[fi] {
			for _, u := range f.sum.Units {
				if u.Cross {
					k[u.Key] = true
				}
			}
		}
	}
	// The memo's pairs of unchanged files (a pair with a changed unit has
	// its key in K).
	olds, good := s.fromRels(ch.unchanged(memo.cross))
	if !good {
		return nil, false, false
	}
	unit := func(u unitRef) unitSum { return s.files[u.file].sum.Units[u.unit] }
	order := func(x, y pairRef) int {
		if c := cmp.Compare(x.b.file, y.b.file); c != 0 {
			return c
		}
		return cmp.Compare(x.b.unit, y.b.unit)
	}
	var kept []pairRef
	for _, p := range olds {
		a, b := unit(p.a), unit(p.b)
		if !a.Cross || !b.Cross || a.Key != b.Key || p.a.file == p.b.file {
			return nil, false, false // not the memo of these summaries
		}
		if !k[a.Key] {
			kept = append(kept, p)
		}
	}
	if !slices.IsSortedFunc(kept, order) {
		return nil, false, false
	}
	var last *pairRel
	if !memo.crossComplete {
		last = &memo.cross[len(memo.cross)-1]
	}
	// The pairs of K, found in the order of their later unit: the pass
	// stops once it has as many as the memo keeps, or is past its last.
	var found []pairRef
	truncated := false
	if len(k) > 0 {
		first := map[uint64]unitRef{}
	units:
		for fi, f := range s.files {
			if f.sum == nil {
				continue
			}
			for ui, u := range f.sum.Units {
				if !u.Cross || !k[u.Key] {
					continue
				}
				ref := unitRef{int32(fi), int32(ui)}
				if a, ok := first[u.Key]; !ok {
					first[u.Key] = ref
				} else if a.file != ref.file {
					if last != nil && s.unitAfter(ref, last.b, last.ub) {
						break units
					}
					if len(found) == maxCrossMemo {
						truncated = true
						break units
					}
					found = append(found, pairRef{a, ref, 1})
				}
			}
		}
	}
	out := make([]pairRef, 0, len(kept)+len(found))
	for i, j := 0, 0; i < len(kept) || j < len(found); {
		if j == len(found) || i < len(kept) && order(kept[i], found[j]) < 0 {
			out = append(out, kept[i])
			i++
		} else {
			out = append(out, found[j])
			j++
		}
	}
	// The exact prefix: up to the memo's last pair, and up to the last
	// pair of K found when the pass stopped short.
	n := len(out)
	for i, p := range out {
		if last != nil && s.unitAfter(p.b, last.b, last.ub) || truncated && order(p, found[len(found)-1]) > 0 {
			n = i
			break
		}
	}
	complete = memo.crossComplete && !truncated && n <= maxCrossMemo
	out = out[:min(n, maxCrossMemo)]
	if !complete && len(out) < maxLeads {
		return nil, false, false // pairs past the memo's last are needed
	}
	return out, complete, true
}

// unitAfter reports whether u comes after unit ub of file rel in the
// scan's order (the index first, then the files by path), whether or not
// rel is still there.
func (s *state) unitAfter(u unitRef, rel string, ub int32) bool {
	f := s.files[u.file]
	if f.rel == rel {
		return u.unit > ub
	}
	if f.index {
		return false
	}
	if s.opts.Layout.Index != "" && rel == s.opts.Layout.Index {
		return true // the index was first
	}
	return strings.Compare(f.rel, rel) > 0
}
