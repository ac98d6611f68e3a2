package offline

import (
	"context"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/memory"
)

// Near-duplicate detection compares word 3-gram shingles (Chinese, Japanese
// and Korean text, which has no spaces, is shingled by character) with the
// Jaccard index. An inverted index over shingles keeps the work proportional
// to the pairs that share something, not to the square of the units.
const (
	nearThreshold = 0.6
	// maxPostings drops shingles so common that they carry no signal and
	// would make the candidate set quadratic.
	maxPostings = 64
	maxPairs    = 200
)

type shingled struct {
	ref Ref
	key string
	set map[string]bool
}

func nearDuplicates(ctx context.Context, files []*file) ([]Pair, error) {
	var us []shingled
	for _, f := range files {
		if f.index {
			continue // pointers are short and alike by design
		}
		for _, u := range f.doc.Units {
			if u.Kind != memory.UnitItem && u.Kind != memory.UnitParagraph || u.Kind == memory.UnitParagraph && u.Parent >= 0 {
				continue
			}
			key := normalize(u.Content)
			set := shingles(key)
			if len(set) < 2 {
				continue
			}
			us = append(us, shingled{ref: Ref{File: f.rel, Line: f.doc.LineOf(u.Start), Text: collapseSpace(u.Content)}, key: key, set: set})
		}
	}
	post := map[string][]int{}
	for i, u := range us {
		for sh := range u.set {
			post[sh] = append(post[sh], i)
		}
	}
	cand := map[[2]int]bool{}
	for _, ids := range post {
		if len(ids) > maxPostings {
			continue
		}
		for x := 0; x < len(ids); x++ {
			for y := x + 1; y < len(ids); y++ {
				cand[[2]int{ids[x], ids[y]}] = true
			}
		}
	}
	var pairs []Pair
	n := 0
	for c := range cand {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		a, b := us[c[0]], us[c[1]]
		if a.key == b.key {
			continue // exact copies are cross-file leads
		}
		if j := jaccard(a.set, b.set); j >= nearThreshold {
			pairs = append(pairs, Pair{A: a.ref, B: b.ref, Similarity: j})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		p, q := pairs[i], pairs[j]
		if p.Similarity != q.Similarity {
			return p.Similarity > q.Similarity
		}
		if p.A.File != q.A.File {
			return p.A.File < q.A.File
		}
		if p.A.Line != q.A.Line {
			return p.A.Line < q.A.Line
		}
		if p.B.File != q.B.File {
			return p.B.File < q.B.File
		}
		return p.B.Line < q.B.Line
	})
	if len(pairs) > maxPairs {
		pairs = pairs[:maxPairs]
	}
	return pairs, nil
}

// shingles is the set of token 3-grams of a normalised text; a text of
// fewer than three tokens is one shingle.
func shingles(norm string) map[string]bool {
	var toks []string
	for _, w := range strings.Fields(norm) {
		if !hasIdeographs(w) {
			toks = append(toks, w)
			continue
		}
		for _, r := range w {
			toks = append(toks, string(r))
		}
	}
	set := map[string]bool{}
	if len(toks) < 3 {
		set[strings.Join(toks, "\x00")] = true
		return set
	}
	for i := 0; i+3 <= len(toks); i++ {
		set[toks[i]+"\x00"+toks[i+1]+"\x00"+toks[i+2]] = true
	}
	return set
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}
