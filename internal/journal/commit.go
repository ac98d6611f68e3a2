package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
)

// Commit lands the staged changes in the memory dir. It refuses with
// ErrConflict, changing nothing, if an original file changed since Begin.
// Otherwise it makes the list of changes durable (state committing) before
// touching memory, replaces each file atomically, removes deleted files
// (their old content is kept by the audit history, which the caller records
// first), syncs the directories and finally drops the transaction. If it
// fails after the record is durable, the transaction stays committing and
// Recover finishes it.
func (t *Txn) Commit() ([]Change, error) {
	if t.closed {
		return nil, fmt.Errorf("journal: commit %s: %w", t.rec.ID, ErrClosed)
	}
	if t.rec.State != StateStaging && t.rec.State != StateParked {
		return nil, fmt.Errorf("journal: commit %s: state is %s", t.rec.ID, t.rec.State)
	}
	chs, err := t.changes()
	if err != nil {
		return nil, err
	}
	if err := t.checkConflicts(chs); err != nil {
		return nil, err
	}
	if len(chs) == 0 {
		return nil, t.finish()
	}
	// The staged content must be durable before the record that points at
	// it: after a power cut, roll-forward needs every staged file, and so
	// every staged file's directory entry.
	stagedDirs := map[string]bool{}
	for _, c := range chs {
		if c.Kind != Deleted {
			p := filepath.Join(t.Dir(), filepath.FromSlash(c.Path))
			if err := syncFile(p); err != nil {
				return nil, fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
			}
			stagedDirs[filepath.Dir(p)] = true
		}
	}
	for _, dir := range sortedKeys(stagedDirs) {
		if err := SyncDir(dir); err != nil {
			return nil, fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
		}
	}
	rec := t.rec
	rec.State = StateCommitting
	rec.Changes = chs
	if err := writeRecord(t.txnDir, rec); err != nil {
		return nil, fmt.Errorf("journal: commit: %w", err)
	}
	t.rec = rec
	crashPoint("commit:record")
	skipped, err := apply(t.memDir, t.Dir(), rec)
	if err != nil {
		return nil, fmt.Errorf("journal: commit %s (left committing; Recover will finish it): %w", t.rec.ID, err)
	}
	if err := t.finish(); err != nil {
		return nil, err
	}
	applied := plain(chs)
	if len(skipped) > 0 {
		kept := applied[:0]
		for _, c := range applied {
			if !contains(skipped, c.Path) {
				kept = append(kept, c)
			}
		}
		return kept, fmt.Errorf("journal: commit %s: %w: edited while committing, kept as edited: %s", t.rec.ID, ErrConflict, strings.Join(skipped, ", "))
	}
	return applied, nil
}

// checkConflicts compares every original file with its fingerprint at
// Begin, and every added path with what exists now.
func (t *Txn) checkConflicts(chs []recChange) error {
	var bad []string
	for _, p := range sortedKeys(t.rec.Base) {
		cur, exists, err := currentFingerprint(filepath.Join(t.memDir, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
		}
		switch {
		case !exists:
			bad = append(bad, p+" (deleted)")
		case !cur.same(t.rec.Base[p]):
			bad = append(bad, p+" (edited)")
		}
	}
	root, err := os.OpenRoot(t.memDir)
	if err != nil {
		return fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
	}
	defer root.Close()
	for _, c := range chs {
		if !fsutil.RealParents(root, filepath.FromSlash(c.Path)) {
			bad = append(bad, c.Path+" (its directory is a symlink or a file in the memory dir)")
			continue
		}
		if c.Kind != Added {
			continue
		}
		if _, err := root.Lstat(filepath.FromSlash(c.Path)); err == nil {
			bad = append(bad, c.Path+" (created)")
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("journal: commit %s: %w: %s", t.rec.ID, ErrConflict, strings.Join(bad, ", "))
	}
	return nil
}

// finish marks the transaction committed and removes it.
func (t *Txn) finish() error {
	rec := t.rec
	rec.State = StateCommitted
	if err := writeRecord(t.txnDir, rec); err != nil {
		return fmt.Errorf("journal: finish: %w", err)
	}
	t.rec = rec
	crashPoint("commit:marked")
	if err := os.RemoveAll(t.txnDir); err != nil {
		return fmt.Errorf("journal: finish %s: %w", t.rec.ID, err)
	}
	t.closed = true
	return nil
}

// apply performs the recorded changes. Each step is idempotent: a file that
// already holds its new content (or is already gone) is left as is, so a
// roll-forward can redo the whole list. A file that holds neither its base
// nor its new content was edited by hand after the record was written; it is
// left alone and returned in skipped. Every file operation goes through an
// os.Root on the memory dir: a path that crosses a symlink out of it fails
// instead of writing elsewhere.
func apply(memDir, stageDir string, rec record) (skipped []string, err error) {
	root, err := os.OpenRoot(memDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	dirs := map[string]bool{".": true}
	installs, deletes := 0, 0
	for _, c := range rec.Changes {
		rel := filepath.FromSlash(c.Path)
		cur, exists, err := fingerprintIn(root, rel)
		if err != nil {
			return skipped, err
		}
		base, inBase := rec.Base[c.Path]
		switch c.Kind {
		case Added, Modified:
			if exists && cur.SHA256 == c.NewSHA256 {
				continue
			}
			ready := (c.Kind == Added && !exists) || (c.Kind == Modified && exists && inBase && cur.same(base))
			if !ready {
				skipped = append(skipped, c.Path)
				continue
			}
			installs++
			if err := installFile(root, filepath.Join(stageDir, rel), rel, c.Mode, installs); err != nil {
				return skipped, err
			}
			dirs[filepath.Dir(rel)] = true
		case Deleted:
			if !exists {
				continue
			}
			if !inBase || !cur.same(base) {
				skipped = append(skipped, c.Path)
				continue
			}
			if err := root.Remove(rel); err != nil {
				return skipped, fmt.Errorf("delete %s: %w", c.Path, err)
			}
			deletes++
			crashPoint("commit:delete:%d", deletes)
			dirs[filepath.Dir(rel)] = true
			removeEmptyParents(root, filepath.Dir(rel), dirs)
		}
	}
	for _, d := range sortedKeys(dirs) {
		if _, err := root.Stat(d); err != nil {
			continue // an emptied subdir that was removed
		}
		if err := fsutil.SyncDirIn(root, d); err != nil {
			return skipped, err
		}
	}
	crashPoint("commit:synced")
	return skipped, nil
}

// fingerprintIn is currentFingerprint through root: a path that is not a
// regular file (a symlink, a directory) counts as existing and different
// from any recorded content, so it is never overwritten or removed.
func fingerprintIn(root *os.Root, rel string) (fp fingerprint, exists bool, err error) {
	info, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return fingerprint{}, false, nil
	}
	if err != nil {
		return fingerprint{}, false, err
	}
	if !info.Mode().IsRegular() {
		return fingerprint{SHA256: "not a regular file: " + info.Mode().String()}, true, nil
	}
	f, err := root.Open(rel)
	if err != nil {
		return fingerprint{}, false, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fingerprint{}, false, fmt.Errorf("hash %s: %w", rel, err)
	}
	return fingerprint{Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), Mode: info.Mode().Perm()}, true, nil
}

// removeEmptyParents removes directories a deletion left empty, up to but
// not including the memory dir, marking their parents for syncing.
func removeEmptyParents(root *os.Root, dir string, dirs map[string]bool) {
	for dir != "." && dir != "" {
		if root.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
		dirs[dir] = true
	}
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
