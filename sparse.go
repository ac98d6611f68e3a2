package dream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/offline"
)

// SparseWriter is implemented by a Runner that can work on a sparse
// staging, so that a dream costs what it changes, not what the memory
// holds: nothing is copied, linked or even stat'ed per memory file before
// the runner starts, and the journal compares, commits and audits only the
// files the runner wrote. When WritesChangesOnly reports true, the runner
// promises, for each Job:
//
//   - it reads the memory from Job.BaseDir, the user's memory dir, and
//     never writes, renames or removes anything there (the Dreamer cannot
//     stop an in-process runner from doing so; a write there bypasses the
//     journal, is never recorded as the dream's, and a file it also staged
//     counts as edited by someone else: merged or staged for review);
//   - it writes every file it changes, whole, at the same relative path
//     under Job.MemoryDir, which starts empty (a file written unchanged is
//     dropped; anything but a regular file, and dream's own names, are
//     ignored);
//   - it never deletes a memory file: a sparse staging has no way to say so.
//
// A runner that does not opt in keeps a full view of the memory in
// Job.MemoryDir (linked, for a FileReplacer, or copied) and BaseDir empty.
type SparseWriter interface {
	WritesChangesOnly() bool
}

// sparse reports whether the Dreamer's runner works on a sparse staging.
func (d *Dreamer) sparse() bool {
	r, ok := d.cfg.Runner.(SparseWriter)
	return ok && r.WritesChangesOnly()
}

// startOf reads a file as the memory was just before the dream: the audit
// history's HEAD, which RecordHandEdits set right before staging began; ok
// is false when the file did not exist then.
func startOf(ctx context.Context, hist *audit.History) func(string) ([]byte, bool, error) {
	return func(path string) ([]byte, bool, error) {
		if hist == nil {
			return nil, false, nil
		}
		data, err := hist.HeadFile(ctx, path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, audit.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return data, true, nil
	}
}

// baseDirOf is Job.BaseDir for the dream's transaction: the memory dir for a
// sparse staging, nothing otherwise.
func (d *Dreamer) baseDirOf(txn *journal.Txn) string {
	if txn.Sparse() {
		return d.cfg.MemoryDir
	}
	return ""
}

// unchangedDir is where the memory's files the dream did not change are
// read after the run: staging for a full view, the memory dir itself for a
// sparse one (its staging holds only what was written).
func (s *memoryStart) unchangedDir(stagedDir string) string {
	if s.txn.Sparse() {
		return s.txn.MemoryDir()
	}
	return stagedDir
}

// pinnedBefore returns the facts a dream must keep that are known before
// it runs (Job.Pinned): those pinned in the memory and the configured ones.
// For a sparse staging, reading every file for pin markers would make each
// dream cost the memory's size, so only the configured facts are known
// then (the staging is still empty, so PinnedFacts reads nothing); the
// facts pinned in the files the dream changed are added after the run by
// pinnedAfter. A fact pinned in a file the dream did not write stays, as
// that file does.
func (d *Dreamer) pinnedBefore(txn *journal.Txn) ([]string, error) {
	dir := d.cfg.MemoryDir
	if txn.Sparse() {
		dir = txn.Dir()
	}
	return offline.PinnedFacts(dir, d.cfg.Settings.Pinned)
}

// pinnedAfter is the facts a finished dream must still hold: for a sparse
// staging, pinned adds those pinned in the start versions of the files it
// changed (read as the guards read them, see memoryStart), those that hold
// a comment at all copied aside for PinnedFacts; otherwise pinned as it is.
// The journal's first look at the staging reads every changed file's
// original anyway: those it proves to be the start version are taken from
// that read (ChangesWithOriginals), and only the others read again.
func (r *dreamRun) pinnedAfter() ([]string, error) {
	if !r.txn.Sparse() {
		return r.pinned, nil
	}
	dir, err := os.MkdirTemp(filepath.Dir(r.txn.Dir()), "pinned-start-")
	if err != nil {
		return nil, fmt.Errorf("pinned facts: %w", err)
	}
	defer os.RemoveAll(dir)
	var keepErr error
	keep := func(rel string, b []byte) {
		if keepErr != nil || !bytes.Contains(b, []byte("<!--")) {
			return // a pin marker is an HTML comment: no comment, no pin
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			keepErr = err
			return
		}
		keepErr = os.WriteFile(p, b, 0o600)
	}
	changes, read, err := r.txn.ChangesWithOriginals(keep)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if c.Kind == journal.Added || read[c.Path] {
			continue
		}
		b, err := r.before.file(c.Path)
		if err != nil {
			return nil, fmt.Errorf("pinned facts: %w", err)
		}
		keep(c.Path, b)
	}
	if keepErr != nil {
		return nil, fmt.Errorf("pinned facts: %w", keepErr)
	}
	return offline.PinnedFacts(dir, r.pinned)
}

// missingPinnedIn is missingPinned over the memory as the dream leaves it.
// A sparse staging holds only what the dream wrote, so a fact not found
// there is then looked for in a view of the whole memory: the dream's files
// over the untouched originals, copied for the check (only ever when a
// pinned fact is not in the written files).
func missingPinnedIn(pinned []string, txn *journal.Txn) ([]string, error) {
	missing, err := missingPinned(pinned, txn.Dir())
	if err != nil || len(missing) == 0 || !txn.Sparse() {
		return missing, err
	}
	view, err := os.MkdirTemp(filepath.Dir(txn.Dir()), "pinned-view-")
	if err != nil {
		return nil, fmt.Errorf("pinned facts: %w", err)
	}
	defer os.RemoveAll(view)
	for _, src := range []string{txn.MemoryDir(), txn.Dir()} {
		if err := copyMemoryTree(src, view); err != nil {
			return nil, fmt.Errorf("pinned facts: %w", err)
		}
	}
	return offline.MissingPinned(missing, view)
}

// copyMemoryTree copies the regular memory files of src over dst.
func copyMemoryTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == src {
			return nil
		}
		if journal.Ignored(e.Name()) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
