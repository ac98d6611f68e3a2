// Package audit keeps the history of a memory dir so that every dream can be
// read and undone. The history is a git repository of its own under
// <stateDir>/audit/<memkey>.git whose work tree is the memory dir, driven by
// the git binary: git is on every developer machine, it stores each version
// compactly, and the history stays inspectable with plain git (GIT_DIR=...
// git log -p) without dream.
//
// The repository is isolated from everything else git might read: no .git is
// ever created inside the memory dir, a repository the memory dir sits in is
// never consulted or touched (GIT_DIR and GIT_WORK_TREE are explicit and
// inherited GIT_* variables are dropped), system and global configuration are
// ignored, hooks are disabled, the author is fixed, and every command is
// bounded by the caller's context. The lock file and dream's temporary files
// are excluded. Commit messages are built from the real diff git computes,
// never from a model's account of what it did.
//
// Callers hold the memory dir's consolidation lock around the methods that
// change files or history (RecordHandEdits, RecordDream, Undo).
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dreamkit/dream/internal/fsutil"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/journal"
)

// Kinds of history entries.
const (
	KindDream = "dream"
	KindUndo  = "undo"
	KindApply = "apply"
	KindHand  = "hand" // edits made outside dream, recorded before a change
)

var (
	// ErrConflict means an undo would overwrite changes made after the
	// dream; the error text lists the files and lines.
	ErrConflict = errors.New("memory changed since the dream")
	// ErrNotFound means no history entry matches the id.
	ErrNotFound = errors.New("no such history entry")
	// ErrNoGit means the git binary is not installed.
	ErrNoGit = errors.New("git binary not found")
)

// History is the audit history of one memory dir.
type History struct {
	gitDir string
	memDir string
	gitBin string
	// scope, when not empty, is all the history records (see SetScope).
	scope []string
	// indexFile, when not empty, is the index the git processes use
	// instead of the history's own (see Pending).
	indexFile string
}

// Meta describes a change being recorded.
type Meta struct {
	DreamID   string
	Status    string
	Provider  string
	Model     string
	StartedAt time.Time
	Kind      string // KindDream, KindUndo or KindApply
	// Paths, when not nil, are the only files (slash paths relative to the
	// memory dir) the change touched: the commit updates just those index
	// entries, so its cost follows the change, not the memory's size. Nil
	// stages whatever git's stat check of the whole memory dir (in scope)
	// finds changed, which costs the change too (see stageAll).
	Paths []string
	// Units, one JSON object each, account for the units of memory the
	// change removed or rewrote (the dream's ledger); they are kept in
	// the commit message, so they travel with the history (sync) and
	// `dream show` reads them back as Entry.Units.
	Units []json.RawMessage
}

// FileStat is one file of an entry, with counts from git's numstat.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Status  string `json:"status"` // added, modified or deleted
}

// Entry is one recorded change.
type Entry struct {
	ID        string     `json:"id"` // dream id, or "hand-<short sha>" for hand edits
	Commit    string     `json:"commit"`
	Kind      string     `json:"kind"`
	Status    string     `json:"status"`
	StartedAt time.Time  `json:"started_at"`
	Files     []FileStat `json:"files"`
	Diff      string     `json:"diff"`
	// Units are Meta.Units as recorded.
	Units []json.RawMessage `json:"units,omitempty"`
	// Undoes is, for an undo, the id of the change it undid.
	Undoes string `json:"undoes,omitempty"`
}

// Open opens the history of memoryDir, creating the repository on first use.
func Open(ctx context.Context, stateDir, memoryDir string) (*History, error) {
	if stateDir == "" {
		return nil, errors.New("audit: open: state dir is empty")
	}
	bin, err := gitBinary()
	if err != nil {
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	key, err := journal.MemKey(memoryDir)
	if err != nil {
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	mem, err := filepath.Abs(memoryDir)
	if err != nil {
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	if real, err := filepath.EvalSymlinks(mem); err == nil {
		mem = real
	}
	if info, err := os.Stat(mem); err != nil {
		return nil, fmt.Errorf("audit: open: memory dir: %w", err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("audit: open: memory dir %s is not a directory", mem)
	}
	stateAbs, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	scope, err := readScope(stateAbs, memoryDir)
	if err != nil {
		return nil, fmt.Errorf("audit: open: scope: %w", err)
	}
	h := &History{gitDir: filepath.Join(stateAbs, "audit", key+".git"), memDir: mem, gitBin: bin, scope: scope}
	if err := h.init(ctx); err != nil {
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	return h, nil
}

// GitDir returns the repository path, for people who want plain git.
func (h *History) GitDir() string { return h.gitDir }

// MemoryDir returns the memory dir the history tracks.
func (h *History) MemoryDir() string { return h.memDir }

// excludes keeps dream's own files out of the history.
var excludes = "# written by dream: never part of the memory\n/" + journal.LockName + "\n" + journal.TempPrefix + "*\n"

// attributes override any .gitattributes in the memory dir ($GIT_DIR/info/
// attributes takes precedence): no line-ending conversion, filter,
// keyword expansion or re-encoding, so each file is recorded and restored
// byte for byte, and no diff driver hides a diff.
const attributes = "# written by dream: record every file byte for byte\n* -text !eol -filter -ident -working-tree-encoding !diff\n"

// addPathspec is the whole memory dir but dream's own files.
var addPathspec = []string{".", ":(exclude,top)" + journal.LockName, ":(exclude,glob)**/" + journal.TempPrefix + "*"}

func (h *History) init(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(h.gitDir, "HEAD")); err != nil {
		if err := os.MkdirAll(filepath.Dir(h.gitDir), 0o700); err != nil {
			return err
		}
		// An empty template: no sample hooks, nothing but the repository.
		if _, err := h.git(ctx, nil, "init", "-q", "--template=", "--initial-branch=main"); err != nil {
			return err
		}
	}
	if err := h.noteMemoryDir(); err != nil {
		return err
	}
	info := filepath.Join(h.gitDir, "info")
	if err := os.MkdirAll(info, 0o700); err != nil {
		return err
	}
	for name, body := range map[string]string{"exclude": excludes, "attributes": attributes} {
		p := filepath.Join(info, name)
		if cur, err := os.ReadFile(p); err == nil && string(cur) == body {
			continue
		}
		if err := fsutil.WriteFileAtomic(p, []byte(body), 0o600, true); err != nil {
			return err
		}
	}
	return nil
}
