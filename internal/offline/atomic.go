package offline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/fsutil"
)

// writeAtomic replaces path with data so that a reader sees the old file or
// the new one and never half of either: a temporary file beside it, renamed
// over it.
//
// It does not fsync. The engine writes a dream's staging copy, which the
// journal's commit makes durable when it lands (a crash before that throws
// the staging copy away), so a sync per file here would only cost time: on
// a busy disk, tens of seconds for a few thousand files.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	return fsutil.WriteFileAtomicNoSync(path, data, perm)
}

// writeAtomicIn is writeAtomic for a path relative to root (the write dir),
// with its parents created as real directories inside it: a parent that is
// a link or a file is refused rather than written through.
func writeAtomicIn(root *os.Root, rel string, data []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	if !fsutil.RealParents(root, rel) {
		return fmt.Errorf("writing %s: a parent in the write dir is not a directory", rel)
	}
	return fsutil.WriteFileAtomicInNoSync(root, rel, data, perm)
}

// writeNewIn writes rel under root (the write dir) when nothing is there
// yet: the file is created exclusively (O_EXCL, which never follows a link
// and fails on any existing name), written whole and closed, with no
// temporary file and no rename. It reports false, having written nothing,
// when rel already exists; the caller then replaces it atomically.
//
// That is safe only because the write dir is a dream's staging, which no
// one reads while the engine runs: the journal hashes and freezes it after
// the runner returns, and a crash before that discards it, so a reader can
// never see the file half written. A failed write removes what it created.
// Creating the inode is the cost the two ways share; this one spares the
// temporary name's creation and the rename.
func writeNewIn(root *os.Root, rel string, data []byte, perm fs.FileMode) (bool, error) {
	if perm == 0 {
		perm = 0o644
	}
	if !fsutil.RealParents(root, rel) {
		return false, fmt.Errorf("writing %s: a parent in the write dir is not a directory", rel)
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", rel, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // as the atomic write does: perm exactly, whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(rel)
		return false, fmt.Errorf("writing %s: %w", rel, err)
	}
	return true, nil
}
