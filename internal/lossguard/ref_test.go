package lossguard

// The loss guard as it was before it ran in parallel and took shortcuts,
// kept verbatim (renamed) as the reference the property and fuzz tests
// hold the current implementation to: whatever it rejected, the current
// one must reject too, with the same units named in the same order.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/memory"
)

type refLeaf struct {
	file       string
	start, end int
	line       int
	text, norm string
}

func refLeaves(rel string, src []byte) []refLeaf {
	d := memory.ParseDoc(src)
	var out []refLeaf
	for _, u := range d.Units {
		if !u.Leaf || u.Kind == memory.UnitBreak {
			continue
		}
		text := string(src[u.Start:u.End])
		if strings.TrimSpace(text) == "" {
			continue
		}
		norm := refNormalize(u.Content)
		if u.Kind == memory.UnitCode || u.Kind == memory.UnitFrontmatter || u.Kind == memory.UnitHTML {
			norm = refNormalize(text)
		}
		out = append(out, refLeaf{file: rel, start: u.Start, end: u.End, line: d.LineOf(u.Start), text: text, norm: norm})
	}
	return out
}

func refNormalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// refCheck compares before with after. Work is linear in the memory: each
// file is parsed once per side at most (an unchanged file once), and the
// search for moved text is built only when some unit left its file.
func refCheck(before, after Tree, o Options) Verdict {
	if o.MaxLoss <= 0 {
		o.MaxLoss = DefaultMaxLoss
	}
	var v Verdict
	for f, b := range before {
		if a, ok := after[f]; !ok || string(a) != string(b) {
			v.Changed = true
			break
		}
	}
	for f := range after {
		if _, ok := before[f]; !ok {
			v.Changed = true
		}
	}
	records := map[string][]Record{}
	for _, r := range o.Records {
		records[r.File] = append(records[r.File], r)
	}
	parsed := map[string][]refLeaf{} // before's refLeaves, reused for an unchanged after
	names := make([]string, 0, len(before))
	for f := range before {
		names = append(names, f)
	}
	sort.Strings(names)
	var gone []refLeaf // units not in their own file any more, nor refAccounted for
	for _, f := range names {
		src := before[f]
		ls := refLeaves(f, src)
		parsed[f] = ls
		for _, l := range ls {
			v.Units++
			v.Bytes += l.end - l.start
		}
		now, ok := after[f]
		if len(src) > minShrinkBytes && (!ok || len(now)*2 < len(src)) {
			v.Shrunk = append(v.Shrunk, f)
		}
		if ok && string(now) == string(src) {
			continue
		}
		have := map[string]int{}
		if ok {
			for _, l := range refLeaves(f, now) {
				have[l.text]++
			}
		}
		for _, l := range ls {
			// A unit a record names is refAccounted for; the others must each
			// still be there, as many times as they were.
			if refAccounted(records[f], l.start, l.end) {
				continue
			}
			if have[l.text] > 0 {
				have[l.text]--
				continue
			}
			gone = append(gone, l)
		}
	}
	if len(gone) > 0 && !o.Strict {
		sv := newRefSurvival(after, before, parsed)
		for _, l := range gone {
			if sv.survives(l) {
				continue
			}
			v.Lost = append(v.Lost, Unit{File: l.file, Line: l.line, Text: l.text})
			v.LostBytes += l.end - l.start
		}
	} else {
		for _, l := range gone {
			v.Unaccounted = append(v.Unaccounted, Unit{File: l.file, Line: l.line, Text: l.text})
		}
	}
	if !o.Strict && v.Units > 0 {
		v.Hold = float64(len(v.Lost)) > o.MaxLoss*float64(v.Units) ||
			float64(v.LostBytes) > o.MaxLoss*float64(v.Bytes) || len(v.Shrunk) > 0
	}
	return v
}

// refSurvival finds a unit's text elsewhere in the memory after the dream.
type refSurvival struct {
	exact  map[string]bool
	corpus string
	edited *refTraceIndex
}

func newRefSurvival(after, before Tree, parsed map[string][]refLeaf) *refSurvival {
	sv := &refSurvival{exact: map[string]bool{}, edited: &refTraceIndex{words: map[string]map[string][]int{}}}
	var all []string
	for f, src := range after {
		ls, ok := parsed[f]
		if b, inB := before[f]; !ok || !inB || string(b) != string(src) {
			ls = refLeaves(f, src)
		}
		m := map[string][]int{}
		for i, l := range ls {
			all = append(all, l.norm)
			sv.exact[l.norm] = true
			for w := range refWordSet(l.norm) {
				if len(m[w]) < 256 { // a word in every unit proves nothing
					m[w] = append(m[w], i)
				}
			}
		}
		sv.edited.words[f] = m
	}
	sv.corpus = strings.Join(all, "\n\x00\n")
	return sv
}

// survives: moved or merged (its text is still in memory, as a unit of its
// own or, when long enough not to match by chance, inside one), or edited
// in place (most of its words are still in one unit of its file: "Fact 3."
// → "Fact 3, confirmed on 2026-11-29.").
func (sv *refSurvival) survives(l refLeaf) bool {
	if l.norm == "" {
		return false
	}
	return sv.exact[l.norm] || len(l.norm) >= minMergedLen && strings.Contains(sv.corpus, l.norm) || sv.edited.traced(l.file, l.norm)
}

func refAccounted(rs []Record, start, end int) bool {
	for _, r := range rs {
		if r.Start < end && start < r.End || r.Start == r.End && r.Start >= start && r.Start < end {
			return true
		}
	}
	return false
}

// refTraceIndex finds, per file, the unit that keeps most of a lost unit's
// words, through an inverted index of words so that the check stays linear.
type refTraceIndex struct {
	// words maps file → word → the refLeaves (by index) that hold it.
	words map[string]map[string][]int
}

// refMinKept is the share of a unit's words that must survive in one unit of
// the same file for it to count as edited rather than lost.
const refMinKept = 0.6

func (ix *refTraceIndex) traced(file, norm string) bool {
	ws := refWordSet(norm)
	if len(ws) < 3 {
		return false
	}
	m := ix.words[file]
	count := map[int]int{}
	for w := range ws {
		for _, i := range m[w] {
			count[i]++
		}
	}
	for _, n := range count {
		if float64(n) >= refMinKept*float64(len(ws)) {
			return true
		}
	}
	return false
}

func refWordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == ',' || r == '.' || r == ';' || r == ':' || r == '!' || r == '?' || r == '-' || r == '(' || r == ')'
	}) {
		out[w] = true
	}
	return out
}

// refCheckChanged is refCheck at the cost of the change: before and after hold
// only the files a dream changed (as they were when it started, and as it
// left them), and unchanged streams the others, which are the same on both
// sides. The unchanged files are read only when the verdict depends on
// them: to look for a unit that left its changed file (it may have moved
// into a file that already said it) and to count the units and bytes the
// loss share is taken of. A dream that lost nothing never reads them, so
// neither its time nor its memory grows with the memory's size. The
// verdict is the one refCheck would give on the whole trees.
func refCheckChanged(before, after Tree, unchanged Files, o Options) (Verdict, error) {
	v := refCheck(before, after, o)
	if o.Strict || (len(v.Lost) == 0 && !(len(v.Shrunk) > 0 && v.Units == 0)) {
		// Strict: a unit no record names fails wherever its text went.
		// Nothing lost: holding depends on the shrunk files alone.
		return v, nil
	}
	if o.MaxLoss <= 0 {
		o.MaxLoss = DefaultMaxLoss
	}
	type candidate struct {
		Unit
		norm  string
		bytes int
	}
	byFile := map[string][]refLeaf{}
	var lost []*candidate
	for _, u := range v.Lost {
		ls, ok := byFile[u.File]
		if !ok {
			ls = refLeaves(u.File, before[u.File])
			byFile[u.File] = ls
		}
		for _, l := range ls {
			if l.line == u.Line && l.text == u.Text {
				lost = append(lost, &candidate{Unit: u, norm: l.norm, bytes: l.end - l.start})
				break
			}
		}
	}
	err := unchanged(func(rel string, src []byte) error {
		ls := refLeaves(rel, src)
		for _, l := range ls {
			v.Units++
			v.Bytes += l.end - l.start
		}
		for _, c := range lost {
			if c.norm == "" || c.Line < 0 {
				continue
			}
			for _, l := range ls {
				if l.norm == c.norm || len(c.norm) >= minMergedLen && strings.Contains(l.norm, c.norm) {
					c.Line = -1 - c.Line // found: moved into a file that already said it
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return v, fmt.Errorf("loss guard: reading the unchanged files: %w", err)
	}
	v.Lost, v.LostBytes = nil, 0
	for _, c := range lost {
		if c.Line < 0 {
			continue
		}
		v.Lost = append(v.Lost, c.Unit)
		v.LostBytes += c.bytes
	}
	v.Hold = v.Units > 0 && (float64(len(v.Lost)) > o.MaxLoss*float64(v.Units) ||
		float64(v.LostBytes) > o.MaxLoss*float64(v.Bytes) || len(v.Shrunk) > 0)
	return v, nil
}
