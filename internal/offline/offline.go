// Package offline is dream's zero-token engine: memory hygiene that needs no
// model because it is mechanical and certain. It removes exact duplicates
// and pointers to missing files, indexes forgotten topic files, rewrites
// relative dates to absolute ones, and keeps MEMORY.md within the budget an
// agent loads. It never deletes a fact it cannot prove is a duplicate: text
// that must leave the index is moved, not dropped.
//
// Judgement calls — a fact the code now contradicts, two notes that almost
// say the same thing — are left to the model; FindLeads hands it the
// suspects so that it spends fewer turns looking.
package offline

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/dreamkit/dream/internal/memory"
)

// Fix kinds, as recorded in Fix.Kind.
const (
	KindDuplicate       = "duplicate"
	KindDanglingPointer = "dangling_pointer"
	KindUnindexedTopic  = "unindexed_topic"
	KindRelativeDate    = "relative_date"
	KindIndexBudget     = "index_budget"
	KindLongIndexLine   = "long_index_line"
)

// OverflowFile is the topic file that receives detail moved out of the index.
const OverflowFile = "index-overflow.md"

// Fix is one change the engine made.
type Fix struct {
	Kind string `json:"kind"`
	// File is relative to the memory dir, with forward slashes.
	File string `json:"file"`
	// Line is the 1-based line in the file as it was before the run; 0 when
	// the fix concerns the whole file.
	Line   int    `json:"line"`
	Detail string `json:"detail"`
}

// Report is what Run did.
type Report struct {
	Fixes []Fix `json:"fixes"`
	// FilesTouched are the files written or created, sorted.
	FilesTouched []string `json:"files_touched"`
	// Notes are problems seen but not fixable mechanically (an index that is
	// over budget with pointers alone, say), for the model or the user.
	Notes []string `json:"notes,omitempty"`
}

// Options configure Run.
type Options struct {
	// MemoryDir is edited in place: the caller passes a staging copy.
	MemoryDir string
	// RepoDir is the code the memory describes; Run itself does not read it
	// (FindLeads does) but callers keep one Options for both.
	RepoDir string
	// Now is the time of the run; zero means time.Now(). A file time after
	// Now is clock skew and is clamped to Now.
	Now time.Time
	// FileTime returns the time relative dates in a file are resolved
	// against, given the file's path relative to MemoryDir. Nil means: the
	// frontmatter "updated" or "date" field if present, else the mtime.
	FileTime func(rel string) time.Time
}

// Run applies every mechanical fix to o.MemoryDir and writes the files that
// changed, each atomically. The output depends only on the input files and
// the times, so the same input yields the same bytes.
func Run(ctx context.Context, o Options) (Report, error) {
	var rep Report
	if o.MemoryDir == "" {
		return rep, fmt.Errorf("offline: no memory dir")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	dir, err := memory.Load(o.MemoryDir)
	if err != nil {
		return rep, fmt.Errorf("offline: %w", err)
	}
	s, err := newState(dir, o)
	if err != nil {
		return rep, fmt.Errorf("offline: %w", err)
	}
	steps := []func(*state){
		(*state).fixDangling,
		(*state).fixDates,
		(*state).fixDuplicates,
		(*state).fixUnindexed,
		(*state).fixLongLines,
		(*state).fixBudget,
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("offline: %w", err)
		}
		step(s)
	}
	rep.Fixes = s.fixes
	rep.Notes = s.notes
	for _, d := range s.docs {
		out := d.render()
		if d.exists && string(out) == string(d.orig) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("offline: %w", err)
		}
		if err := writeAtomic(filepath.Join(o.MemoryDir, filepath.FromSlash(d.rel)), out, d.mode); err != nil {
			return rep, fmt.Errorf("offline: %w", err)
		}
		rep.FilesTouched = append(rep.FilesTouched, d.rel)
	}
	sort.Strings(rep.FilesTouched)
	return rep, nil
}
