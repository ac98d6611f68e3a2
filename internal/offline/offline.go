// Package offline is dream's zero-token engine: memory hygiene that needs no
// model, restricted to edits that provably keep what the memory means.
//
// It reads each file as a CommonMark tree of units (list items with what is
// nested in them, paragraphs, table rows, code, quotes, frontmatter), each
// addressed by its file and its full heading path, and it edits only by
// splicing byte ranges of the original, so every byte it did not mean to
// change stays identical (line endings, a BOM, trailing spaces).
//
// It may do only this:
//   - remove a duplicate unordered list item or paragraph: equal after
//     normalising case, whitespace, emphasis and final punctuation, in the
//     same file under the same heading path, with nothing attached to it;
//   - add an index pointer for a memory file the index mentions in no link
//     form (never README, folders, or what a comment or .dreamignore
//     excludes);
//   - keep the index within the budget an agent loads, moving the fewest
//     lines, pointer detail before the user's own text;
//   - rewrite a relative date when the day its line was written is known
//     (a dated heading above it, the transcript call that wrote it, a
//     one-day audit window).
//
// Everything else it notices (cross-file and near duplicates, dangling
// pointers, dates without an anchor, drifted names) is a Lead: handed to the
// model and shown to the user, never applied.
//
// The cost follows the memory linearly and its text is never held whole:
// files are read one at a time, each parsed once, with its own fixes
// decided then and a small summary kept for the cross-file leads (hashes of
// units, shingle hashes, mentions); near duplicates come from an index of
// shingle postings, not from comparing pairs, and every list of leads is
// capped as it is built. Only the index and the overflow file stay whole.
// Files are read, analysed and written on Options.Workers goroutines, the
// result merged in file order.
package offline

import (
	"context"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/indexcount"
	"github.com/dreamkit/dream/internal/memory"
)

// Fix kinds, as recorded in Fix.Kind.
const (
	KindDuplicate      = "duplicate"
	KindUnindexedTopic = "unindexed_topic"
	KindRelativeDate   = "relative_date"
	KindIndexBudget    = "index_budget"
)

// OverflowFile is the topic file that receives lines moved out of the index.
const OverflowFile = "index-overflow.md"

// Fix is one change the engine made. Start and End name the bytes of File,
// as it was before the run, that the fix replaced or removed (equal for an
// insertion): the loss guard checks every changed unit against them.
type Fix struct {
	Kind string `json:"kind"`
	// File is relative to the memory dir, with forward slashes.
	File string `json:"file"`
	// Line is the 1-based line in the file before the run; 0 for a file the
	// run created.
	Line   int    `json:"line"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Detail string `json:"detail"`
}

// Report is what Run did and what it left for judgement.
type Report struct {
	Fixes []Fix `json:"fixes"`
	// FilesTouched are the files written or created, sorted.
	FilesTouched []string `json:"files_touched"`
	// Leads are what the engine saw but may not change.
	Leads []Lead `json:"leads,omitempty"`
	// Notes are problems a fix could not solve (an index still over budget
	// with pointers alone).
	Notes []string `json:"notes,omitempty"`
	// Found are the leads of the memory as it was before the run, when
	// Options.Leads asked for them: one reading of the memory serves both.
	Found *Leads `json:"found,omitempty"`
	// Index is the index as its agent loads it after the run; nil when the
	// layout has none or the memory has no index.
	Index *IndexState `json:"index,omitempty"`
}

// Layout says which files of the memory are an index (one-line pointers to
// topic files that an agent loads every turn) rather than a document. It
// comes from the host agent, never from the shape of one line: nanobot's
// MEMORY.md is a document that may well start a bullet with a link.
type Layout struct {
	// Host is the agent the layout is of; "" when none was named and the
	// memory's files named none (see LayoutIn). Recognized says, when the
	// files named it, which file did.
	Host, Recognized string
	// Index is the index file relative to the memory dir, or "" when every
	// file is a document.
	Index string
	// Limit is how the agent loads the index and where it cuts it; set
	// whenever Index is.
	Limit indexcount.Limit
	// Files are the host's roles for its memory files (host.Layout.Files):
	// only writable files are fixed, and a Codex MEMORY.md only inside its
	// block bodies, each block on its own. Empty: every Markdown file is a
	// document the engine may fix.
	Files []host.File
}

// LayoutFor returns the layout of a host as named by --host. A file is an
// index when its agent loads it into every prompt and cuts it at a limit
// (indexcount.Of): Claude Code's and codebot's MEMORY.md ("MEMORY.md
// ... an index"; codebot's internal/dream mirrors it). nanobot keeps
// MEMORY.md, SOUL.md and USER.md as documents, and a plain notes folder
// ("dir") and Gemini have no index. Codex keeps MEMORY.md as blocks (one
// rollout's memories each) that it parses, with the roles of host.Resolve.
// An empty host is a MEMORY.md index that must fit every agent that keeps
// one.
func LayoutFor(name string) Layout {
	if name == "codex" {
		// Codex's MEMORY.md is blocks of one rollout each, not an index.
		return codexLayout()
	}
	if lim, ok := indexcount.Of(name); ok {
		return Layout{Host: name, Index: memory.IndexFile, Limit: lim}
	}
	return Layout{Host: name}
}

// LayoutIn is LayoutFor for the memory in dir: with no host named, the
// agent whose own files the memory holds (host.Recognize: nanobot's log
// beside its MEMORY.md, Codex's generated files), whose MEMORY.md is then
// no index; otherwise LayoutFor.
func LayoutIn(name, dir string) Layout {
	if name == "" && dir != "" {
		if hl, ok := host.Recognize(dir); ok {
			l := LayoutFromHost(hl)
			l.Recognized = hl.Notes
			return l
		}
	}
	return LayoutFor(name)
}

// Options configure Run.
type Options struct {
	// MemoryDir is edited in place: the caller passes a staging copy,
	// which it makes durable itself (files are replaced atomically, not
	// synced).
	MemoryDir string
	// RepoDir is the code the memory describes; only leads read it.
	RepoDir string
	// Layout says which file is the index; the zero value means none.
	Layout Layout
	// Now is the time of the run; zero means time.Now(). It is never an
	// anchor for a relative date.
	Now time.Time
	// Provenance says on which day a line was written, beyond what the file
	// itself says (a dated heading). Nil means the file alone.
	Provenance Provenance
	// Leads asks Run to report the leads too (Report.Found), from the same
	// reading of the memory, instead of a second pass with FindLeads.
	Leads bool
	// Workers is how many files are read, analysed and written at once;
	// 0 means one per processor (GOMAXPROCS). The result never depends on
	// it: each file's work is its own and records are merged in file order.
	Workers int
}

// Run applies the permitted fixes to o.MemoryDir and writes the files that
// changed, each replaced atomically. The output depends only on the input
// files and the provenance, so the same input yields the same bytes, and a second run
// over the output changes nothing.
func Run(ctx context.Context, o Options) (Report, error) {
	var rep Report
	if o.MemoryDir == "" {
		return rep, fmt.Errorf("offline: no memory dir")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	s, err := scan(ctx, o)
	if err != nil {
		return rep, fmt.Errorf("offline: %w", err)
	}
	defer s.close()
	if o.Leads {
		l, err := s.findLeads(ctx)
		if err != nil {
			return rep, fmt.Errorf("offline: %w", err)
		}
		rep.Found = &l
	}
	for _, step := range []func(*state) error{(*state).fixUnindexed, (*state).fixBudget} {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("offline: %w", err)
		}
		if err := step(s); err != nil {
			return rep, fmt.Errorf("offline: %w", err)
		}
	}
	if rep.Index, err = s.indexState(); err != nil {
		return rep, fmt.Errorf("offline: %w", err)
	}
	rep.Fixes = s.fixes
	rep.Notes = s.notes
	rep.Leads = s.leads
	if rep.Found != nil {
		for _, ld := range s.leads {
			if ld.Kind == KindUndatedRelativeDate && len(rep.Found.UndatedDates) < maxLeads {
				rep.Found.UndatedDates = append(rep.Found.UndatedDates, Ref{File: ld.File, Line: ld.Line, Text: ld.Detail})
			}
		}
	}
	if rep.FilesTouched, err = s.write(ctx); err != nil {
		return rep, fmt.Errorf("offline: %w", err)
	}
	return rep, nil
}
