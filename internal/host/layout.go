package host

import (
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/gate"
)

// Role is what a memory file is to the agent that loads it, which decides
// what a dream may do to it.
type Role string

const (
	// RoleIndex is a file the agent injects into every prompt and that
	// points at the others (Claude Code's MEMORY.md): kept short, one line
	// per entry.
	RoleIndex Role = "index"
	// RoleDocument is a memory file the agent reads in full or on demand;
	// its content is the memory itself.
	RoleDocument Role = "document"
	// RoleSchema is a document whose structure the agent parses (Codex's
	// MEMORY.md blocks, memory_summary.md sections): edits must keep the
	// structure, and only the offline engine's byte-range splices inside a
	// block body are safe.
	RoleSchema Role = "schema"
	// RoleSection is a file of which only one Markdown section is memory
	// (Gemini's global GEMINI.md); everything outside it is the user's.
	RoleSection Role = "section"
	// RoleGenerated is rebuilt by the agent's own pipeline from its
	// database (Codex's raw_memories.md, rollout_summaries/): any edit is
	// overwritten, so it is read, never written.
	RoleGenerated Role = "generated"
	// RoleLog is an append-only log the agent replays (nanobot's
	// history.jsonl): read-only to a dream.
	RoleLog Role = "log"
	// RoleCursor is the agent's own bookkeeping (nanobot's .cursor): never
	// touched.
	RoleCursor Role = "cursor"
)

// Format is how a file must parse for the agent to load it.
type Format string

const (
	FormatMarkdown          Format = "markdown"            // UTF-8 text; frontmatter, when opened, is closed
	FormatCodexMemoryBlocks Format = "codex-memory-blocks" // Codex MEMORY.md: ---/rollout_summary_files:/---/body blocks
	FormatCodexSummary      Format = "codex-memory-summary"
	FormatJSONL             Format = "jsonl"   // one JSON object per line
	FormatCursor            Format = "cursor"  // one decimal integer
	FormatSection           Format = "section" // Markdown holding the named section
)

// File is one file of the memory as its agent sees it.
type File struct {
	// Path is slash-separated and relative to Layout.MemoryDir, or absolute
	// for a file outside it (Gemini's global GEMINI.md). It may be a
	// doublestar pattern ("rollout_summaries/*.md").
	Path   string `json:"path"`
	Role   Role   `json:"role"`
	Format Format `json:"format"`
	// Loaded: the agent reads the file into its prompts (directly or on
	// demand), so it must still parse after a dream.
	Loaded bool `json:"loaded"`
	// OnDemand: the agent does not put the file in its prompt; it reads it
	// when needed (a tool call the index leads the model to).
	OnDemand bool `json:"on_demand,omitempty"`
	// Writable: a dream may change it. Never true for generated files,
	// logs, cursors or anything in a credentials directory.
	Writable bool `json:"writable"`
	// Section is, for RoleSection, the heading line whose section alone is
	// memory ("## Gemini Added Memories").
	Section string `json:"section,omitempty"`
	// Limit is what the agent loads of it, in words, when it truncates.
	Limit string `json:"limit,omitempty"`
}

// Source says where one location of a layout came from.
type Source struct {
	// What is the location: "memory dir", "sessions dir", "settings file".
	What string `json:"what"`
	Path string `json:"path"`
	// From is "default", "variable NAME", "setting KEY in FILE",
	// "projects.json", "hook transcript_path" ...
	From string `json:"from"`
}

// Consolidator is the agent's own memory consolidator, which would run
// beside dream on the same files.
type Consolidator struct {
	// Name is what the agent calls it ("autoDream", "Dream", "memories").
	Name string `json:"name"`
	// Enabled is whether it is on, as far as its settings tell.
	Enabled bool `json:"enabled"`
	// TakesLock: it honours MEMORY_DIR/.consolidate-lock, so dream and it
	// exclude each other; false means they can overlap.
	TakesLock bool `json:"takes_lock"`
	// Detail says where that was read and what it means.
	Detail string `json:"detail"`
}

// Layout is where one agent keeps things for one repository, and what the
// agent expects of each file. It is the one place the rest of dream learns
// an agent's conventions from: the session gate takes Sessions, the
// sandbox and the offline engine take Files (Writable, Role), drift checks
// take DriftRepos.
type Layout struct {
	// Host is the agent's name as given to Resolve.
	Host string `json:"host"`
	// MemoryDir holds the memory files and the consolidation lock.
	MemoryDir string `json:"memory_dir"`
	// SessionsDir holds the transcripts the session gate counts; "" when
	// the host keeps none.
	SessionsDir string `json:"sessions_dir"`
	// Notes is one line on what was assumed.
	Notes string `json:"notes"`
	// Sources says where MemoryDir, SessionsDir and any settings read came
	// from.
	Sources []Source `json:"sources,omitempty"`
	// Elsewhere are memory dirs the agent uses instead of MemoryDir in some
	// of its sessions (Claude Code's -p sessions in a folder it does not
	// trust yet), each with why; doctor warns about them.
	Elsewhere []Source `json:"elsewhere,omitempty"`
	// Assumptions are what the layout could not confirm on disk.
	Assumptions []string `json:"assumptions,omitempty"`
	// Files are the memory files the agent loads, most important first.
	Files []File `json:"files,omitempty"`
	// Sessions is the agent's own rule for what counts as a session; nil
	// means every *.jsonl.
	Sessions *gate.Rule `json:"-"`
	// SessionsCounted says in words what Sessions counts.
	SessionsCounted string `json:"sessions_counted,omitempty"`
	// Consolidator is the agent's own, when it has one.
	Consolidator *Consolidator `json:"consolidator,omitempty"`
	// NotLoaded says why the agent, as configured now, loads none of this
	// memory (Codex with its memories feature off); empty when it does.
	NotLoaded string `json:"not_loaded,omitempty"`
	// DriftRepos are the repositories the memory describes when that is
	// not the current directory (Codex's memory is global: its rollouts
	// name the working directories they ran in).
	DriftRepos []string `json:"drift_repos,omitempty"`
}

// Writable returns the writable files' paths (patterns included), so that a
// sandbox can allow exactly those and nothing else in the folder.
func (l Layout) Writable() []string {
	var out []string
	for _, f := range l.Files {
		if f.Writable {
			out = append(out, f.Path)
		}
	}
	return out
}

// FileFor returns the File entry that governs rel (slash-separated,
// relative to MemoryDir): the first whose Path equals rel or matches it as
// a pattern.
func (l Layout) FileFor(rel string) (File, bool) {
	rel = filepath.ToSlash(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") {
		return File{}, false
	}
	for _, f := range l.Files {
		if f.Path == rel {
			return f, true
		}
		if strings.ContainsAny(f.Path, "*?[") && !strings.HasPrefix(rel, "/") {
			if ok, _ := matchPattern(f.Path, rel); ok {
				return f, true
			}
		}
	}
	return File{}, false
}

// abs returns f's absolute path under l (patterns stay patterns).
func (l Layout) abs(f File) string {
	if filepath.IsAbs(f.Path) {
		return f.Path
	}
	return filepath.Join(l.MemoryDir, filepath.FromSlash(f.Path))
}

// source records where a location came from.
func (l *Layout) source(what, path, from string) {
	l.Sources = append(l.Sources, Source{What: what, Path: path, From: from})
}
