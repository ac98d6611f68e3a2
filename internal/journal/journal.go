// Package journal makes a dream all-or-nothing. Begin stages the memory
// directory under the state dir: for a runner that only ever replaces
// files, each unchanged file is a hard link to its original, so that only
// what the runner writes is materialised (copied where a link cannot be
// made); any other runner gets a copy. The agent writes only the staging;
// Commit then writes every changed file into the real memory directory, or
// Discard throws the staging away. Its costs follow the change: a staged
// file whose stat is unchanged is never read or hashed, and files over
// OpaqueSize are only ever streamed. A dream killed at any
// instant is finished or forgotten by the next process's Recover, driven by a
// small JSON record written atomically beside the staging copy:
//
//	staging    → the dream may be half done: discard it
//	committing → the record lists every change and the staging copy still
//	             holds the new content: roll forward
//	committed  → only cleanup was left
//	parked     → kept for review on purpose: leave it alone
//
// Each memory file is replaced by putting its new content under a
// temporary name in the same directory as its target (the staged file
// hard-linked there from a linked staging, else copied and synced) and
// renaming it over the target, so a reader sees every file either old or
// new, never half written, even when the state dir lives on another file
// system; a staged file written again after its changes were checked is
// refused. Callers
// hold the memory dir's consolidation lock around anything that changes
// files; the package itself takes no locks.
package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/lock"
)

// LockName is the consolidation lock file in the memory dir. It belongs to
// the lock protocol, not to the memory: it is never staged, committed,
// audited or restored.
const LockName = lock.FileName

// TempPrefix starts the name of every temporary file dream creates inside the
// memory dir, so an interrupted commit's leftovers are recognisable and
// Recover can remove them.
const TempPrefix = fsutil.TempPrefix

// Transaction states, as written in the record.
const (
	StateStaging    = "staging"
	StateCommitting = "committing"
	StateCommitted  = "committed"
	StateParked     = "parked"
)

// Change kinds.
const (
	Added    = "added"
	Modified = "modified"
	Deleted  = "deleted"
)

var (
	// ErrConflict means the memory dir changed under a transaction (someone
	// edited memory during the dream); the error text names the files.
	ErrConflict = errors.New("memory changed during the dream")
	// ErrNotFound means no transaction matches the id.
	ErrNotFound = errors.New("no such transaction")
	// ErrClosed means the transaction was already committed or discarded.
	ErrClosed = errors.New("transaction already finished")
	// ErrStagingChanged means a staged file was written or replaced after
	// the changes were checked (a runner that went on writing after it
	// returned): the commit changed nothing, since what would land is not
	// what the guards saw.
	ErrStagingChanged = errors.New("staging changed after it was checked")
)

// Change is one file a transaction changes.
type Change struct {
	Path    string `json:"path"` // slash-separated, relative to the memory dir
	Kind    string `json:"kind"` // Added, Modified or Deleted
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// Info summarises a transaction for listings.
type Info struct {
	ID        string    `json:"id"`
	State     string    `json:"state"`
	PID       int       `json:"pid"`
	CreatedAt time.Time `json:"created_at"`
}

// Recovery reports what Recover did.
type Recovery struct {
	RolledForward []string // txn ids whose commit was finished
	Discarded     []string // txn ids whose unfinished dream was dropped
	// Skipped lists "id: path" for files a roll-forward left alone because
	// they were edited by hand after the crash; the hand edit wins.
	Skipped []string
	// Landed maps the id of each dream whose commit was finished (rolled
	// forward, or committed but not yet cleaned up) to the paths it landed,
	// so the caller can record them under that dream, not as hand edits.
	Landed map[string][]string
}

func (r *Recovery) landed(id string, paths []string) {
	if r.Landed == nil {
		r.Landed = map[string][]string{}
	}
	r.Landed[id] = paths
}

// Ignored reports whether a file or directory name inside the memory dir is
// outside the memory proper: the lock file, dream's temporary files, and a
// .git directory some hosts keep there.
func Ignored(name string) bool {
	return name == LockName || name == ".git" || strings.HasPrefix(name, TempPrefix)
}

// MemKey names a memory dir inside the state dir: a short hash of its
// absolute, clean, symlink-resolved path, so two spellings of one directory
// share a journal and audit history.
func MemKey(memoryDir string) (string, error) {
	abs, err := absDir(memoryDir)
	if err != nil {
		return "", err
	}
	return keyOf(abs), nil
}

// keyOf is MemKey of a path absDir has already resolved (journalRoot's):
// resolving it again would repeat an lstat of each element of the path on
// every hook that asks HasPending (cmd/dream/internal/early).
func keyOf(abs string) string {
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:8])
}

// absDir returns the absolute clean path of dir, with symlinks resolved when
// it exists.
func absDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("memory dir is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return filepath.Clean(abs), nil
}

// validID accepts ids that are safe as a single path element
// (fsutil.ValidName, the task registry's rule), at most 128 bytes: a
// review's id adds "-review" to its dream's.
func validID(id string) error {
	if !fsutil.ValidName(id, 128) {
		return fmt.Errorf("invalid transaction id %q: only letters, digits, '-', '_' and '.' are allowed, not first", id)
	}
	return nil
}
