package lossguard

import (
	"strings"
	"sync/atomic"
)

// survivors marks, in found, the units of gone whose text survives in the
// leaves ls of one file after the dream: as a unit of its own, or, when
// long enough not to match by chance, inside one (moved or merged). The
// units own (indices into gone) left this very file, and survive too when
// edited in place: most of their words are still in one unit of it ("Fact
// 3." → "Fact 3, confirmed on 2026-11-29."). A unit survives if any file
// keeps it, so files may be searched in any order, at once.
func survivors(ls []leaf, gone []goneUnit, own []int, found []atomic.Bool) {
	if !pending(gone, found) {
		return
	}
	norms := make([]string, len(ls))
	exact := make(map[string]bool, len(ls))
	for i, l := range ls {
		norms[i] = l.norm()
		exact[norms[i]] = true
	}
	corpus := strings.Join(norms, "\n\x00\n")
	for i := range gone {
		g := &gone[i]
		if g.norm == "" || found[i].Load() {
			continue
		}
		if exact[g.norm] || len(g.norm) >= minMergedLen && strings.Contains(corpus, g.norm) {
			found[i].Store(true)
		}
	}
	if len(own) == 0 {
		return
	}
	ix := newTraceIndex(norms)
	for _, i := range own {
		if gone[i].norm != "" && !found[i].Load() && ix.traced(gone[i].norm) {
			found[i].Store(true)
		}
	}
}

// traceIndex finds the unit of a file that keeps most of a lost unit's
// words, through an inverted index of words so that the check stays linear.
type traceIndex struct {
	// words maps word → the leaves (by index) that hold it.
	words map[string][]int
}

// maxPostings caps a word's leaves: a word in every unit proves nothing.
const maxPostings = 256

func newTraceIndex(norms []string) *traceIndex {
	ix := &traceIndex{words: map[string][]int{}}
	for i, n := range norms {
		for w := range wordSet(n) {
			if len(ix.words[w]) < maxPostings {
				ix.words[w] = append(ix.words[w], i)
			}
		}
	}
	return ix
}

// minKept is the share of a unit's words that must survive in one unit of
// the same file for it to count as edited rather than lost.
const minKept = 0.6

func (ix *traceIndex) traced(norm string) bool {
	ws := wordSet(norm)
	if len(ws) < 3 {
		return false
	}
	count := map[int]int{}
	for w := range ws {
		for _, i := range ix.words[w] {
			count[i]++
		}
	}
	for _, n := range count {
		if float64(n) >= minKept*float64(len(ws)) {
			return true
		}
	}
	return false
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == ',' || r == '.' || r == ';' || r == ':' || r == '!' || r == '?' || r == '-' || r == '(' || r == ')'
	}) {
		out[w] = true
	}
	return out
}
