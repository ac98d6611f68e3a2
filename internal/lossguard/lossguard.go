// Package lossguard compares a memory before and after a dream, unit by
// unit, and decides whether the dream may land. It runs after every dream,
// model or offline, before the commit: memory belongs to the user, so a
// change that loses what the memory says without a trace must not land
// silently.
//
// Units are the text-bearing blocks of the Markdown tree (paragraphs,
// headings, code, table rows, html), each compared by its whole lines.
//
//   - Strict (the offline engine): every unit that is not byte-identical in
//     its file afterwards must overlap a fix record's byte range, or the
//     dream fails: the engine may only change what it says it changed.
//   - Model: a unit may disappear only if its text survives in some memory
//     file (moved or merged). When the units lost without a trace exceed
//     MaxLoss of the units or of the bytes, or a file shrinks below half its
//     size, the dream is held for review, naming what it would lose.
package lossguard

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/memory"
)

// DefaultMaxLoss is the share of units or bytes a model dream may lose
// without a trace before it is held for review.
const DefaultMaxLoss = 0.20

// minShrinkBytes is the size under which a file halving says nothing (a
// two-line stub tidied to one), so the half-size rule applies above it.
const minShrinkBytes = 64

// minMergedLen is the shortest text found inside another unit: "ops"
// occurs in any memory, a sentence does not.
const minMergedLen = 16

// Record names bytes of a file, as it was before the dream, that a runner
// changed on purpose (an offline fix).
type Record struct {
	File       string
	Start, End int
}

// Options configure Check.
type Options struct {
	// Strict requires every changed unit to be named by a Record.
	Strict bool
	// Records are the runner's account of its changes.
	Records []Record
	// MaxLoss is the share (0–1] of units or bytes that may be lost without
	// a trace; zero means DefaultMaxLoss.
	MaxLoss float64
}

// Unit is one unit of a file, for reports.
type Unit struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Verdict is what Check decided.
type Verdict struct {
	// Changed is false when no memory file differs: "no changes".
	Changed bool `json:"changed"`
	// Unaccounted are, in strict mode, changed units no record names.
	Unaccounted []Unit `json:"unaccounted,omitempty"`
	// Lost are units whose text survives nowhere.
	Lost []Unit `json:"lost,omitempty"`
	// Shrunk are files now under half their size (or removed).
	Shrunk []string `json:"shrunk,omitempty"`
	Units  int      `json:"units"`
	Bytes  int      `json:"bytes"`
	// LostBytes is the size of the lost units.
	LostBytes int `json:"lost_bytes"`
	// Hold is set when the dream must be staged for review, not applied.
	Hold bool `json:"hold"`
}

// Err is the strict-mode failure, or nil.
func (v Verdict) Err() error {
	if len(v.Unaccounted) == 0 {
		return nil
	}
	return &UnaccountedError{Units: v.Unaccounted}
}

// UnaccountedError is a strict dream that changed units it did not record.
type UnaccountedError struct{ Units []Unit }

func (e *UnaccountedError) Error() string {
	return fmt.Sprintf("loss guard: the offline engine changed %d unit(s) no fix names: %s", len(e.Units), describe(e.Units, 5))
}

// Summary says what would be lost, for the user and the report.
func (v Verdict) Summary() string {
	if !v.Changed {
		return "no changes"
	}
	if !v.Hold {
		return ""
	}
	var parts []string
	if len(v.Lost) > 0 {
		parts = append(parts, fmt.Sprintf("would lose %d of %d unit(s) (%d of %d bytes) without a trace: %s",
			len(v.Lost), v.Units, v.LostBytes, v.Bytes, describe(v.Lost, 8)))
	}
	if len(v.Shrunk) > 0 {
		parts = append(parts, "would shrink below half: "+strings.Join(v.Shrunk, ", "))
	}
	return "loss guard: held for review: " + strings.Join(parts, "; ")
}

func describe(us []Unit, n int) string {
	var b []string
	for i, u := range us {
		if i == n {
			b = append(b, fmt.Sprintf("and %d more", len(us)-n))
			break
		}
		b = append(b, fmt.Sprintf("%s:%d %q", u.File, u.Line, clip(u.Text, 80)))
	}
	return strings.Join(b, ", ")
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Tree is the Markdown files of a memory dir: path → bytes.
type Tree map[string][]byte

// Covers reports whether ReadTree reads rel (slash-separated): a Markdown
// file with no hidden path element.
func Covers(rel string) bool {
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") {
			return false
		}
	}
	return strings.EqualFold(path.Ext(rel), ".md")
}

// ReadTree reads every Markdown file under dir (hidden entries and the
// lock skipped, as memory.Load does).
func ReadTree(dir string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || !strings.EqualFold(filepath.Ext(p), ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		t[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loss guard: reading %s: %w", dir, err)
	}
	return t, nil
}

type leaf struct {
	file       string
	start, end int
	line       int
	text, norm string
}

func leaves(rel string, src []byte) []leaf {
	d := memory.ParseDoc(src)
	var out []leaf
	for _, u := range d.Units {
		if !u.Leaf || u.Kind == memory.UnitBreak {
			continue
		}
		text := string(src[u.Start:u.End])
		if strings.TrimSpace(text) == "" {
			continue
		}
		norm := normalize(u.Content)
		if u.Kind == memory.UnitCode || u.Kind == memory.UnitFrontmatter || u.Kind == memory.UnitHTML {
			norm = normalize(text)
		}
		out = append(out, leaf{file: rel, start: u.Start, end: u.End, line: d.LineOf(u.Start), text: text, norm: norm})
	}
	return out
}

func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// Check compares before with after. Work is linear in the memory: each
// file is parsed once per side at most (an unchanged file once), and the
// search for moved text is built only when some unit left its file.
func Check(before, after Tree, o Options) Verdict {
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
	parsed := map[string][]leaf{} // before's leaves, reused for an unchanged after
	names := make([]string, 0, len(before))
	for f := range before {
		names = append(names, f)
	}
	sort.Strings(names)
	var gone []leaf // units not in their own file any more, nor accounted for
	for _, f := range names {
		src := before[f]
		ls := leaves(f, src)
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
			for _, l := range leaves(f, now) {
				have[l.text]++
			}
		}
		for _, l := range ls {
			// A unit a record names is accounted for; the others must each
			// still be there, as many times as they were.
			if accounted(records[f], l.start, l.end) {
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
		sv := newSurvival(after, before, parsed)
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

// survival finds a unit's text elsewhere in the memory after the dream.
type survival struct {
	exact  map[string]bool
	corpus string
	edited *traceIndex
}

func newSurvival(after, before Tree, parsed map[string][]leaf) *survival {
	sv := &survival{exact: map[string]bool{}, edited: &traceIndex{words: map[string]map[string][]int{}}}
	var all []string
	for f, src := range after {
		ls, ok := parsed[f]
		if b, inB := before[f]; !ok || !inB || string(b) != string(src) {
			ls = leaves(f, src)
		}
		m := map[string][]int{}
		for i, l := range ls {
			all = append(all, l.norm)
			sv.exact[l.norm] = true
			for w := range wordSet(l.norm) {
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
func (sv *survival) survives(l leaf) bool {
	if l.norm == "" {
		return false
	}
	return sv.exact[l.norm] || len(l.norm) >= minMergedLen && strings.Contains(sv.corpus, l.norm) || sv.edited.traced(l.file, l.norm)
}

func accounted(rs []Record, start, end int) bool {
	for _, r := range rs {
		if r.Start < end && start < r.End || r.Start == r.End && r.Start >= start && r.Start < end {
			return true
		}
	}
	return false
}

// traceIndex finds, per file, the unit that keeps most of a lost unit's
// words, through an inverted index of words so that the check stays linear.
type traceIndex struct {
	// words maps file → word → the leaves (by index) that hold it.
	words map[string]map[string][]int
}

// minKept is the share of a unit's words that must survive in one unit of
// the same file for it to count as edited rather than lost.
const minKept = 0.6

func (ix *traceIndex) traced(file, norm string) bool {
	ws := wordSet(norm)
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
