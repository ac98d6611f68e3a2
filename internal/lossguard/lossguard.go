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
	"context"
	"fmt"
	"path"
	"runtime"
	"strings"
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
	// Ledger accounts, outside strict mode, for every unit that is not in
	// its file as it was: moved, merged, rewritten or deleted (see Entry),
	// in the order of Lost (by file, then line).
	Ledger []Entry `json:"ledger,omitempty"`
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
	return HoldPrefix + "held for review: " + strings.Join(parts, "; ")
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
	err := WalkTree(dir, nil)(func(rel string, src []byte) error {
		t[rel] = src
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loss guard: reading %s: %w", dir, err)
	}
	return t, nil
}

// Check compares before with after: the whole memory on both sides. Work
// is linear in the memory, and the files are compared in parallel (see
// CheckFiles); CheckChanged is the same verdict at the cost of the change.
func Check(before, after Tree, o Options) Verdict {
	v, _ := check(context.Background(), treeNames(before, after), TreeSides(before, after), nil, o, runtime.GOMAXPROCS(0))
	return v
}

// treeNames are the paths on either side.
func treeNames(before, after Tree) []string {
	names := make([]string, 0, len(before)+len(after))
	for f := range before {
		names = append(names, f)
	}
	for f := range after {
		if _, ok := before[f]; !ok {
			names = append(names, f)
		}
	}
	return names
}

func accounted(rs []Record, start, end int) bool {
	for _, r := range rs {
		if r.Start < end && start < r.End || r.Start == r.End && r.Start >= start && r.Start < end {
			return true
		}
	}
	return false
}
