package journal

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/fsutil"
)

// finishTemp fills, syncs, chmods and closes a freshly created temp file.
func finishTemp(f *os.File, perm os.FileMode, fill func(io.Writer) error) error {
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// installFile copies src over rel inside root atomically (temp file beside
// the target, sync, rename). Every step goes through the os.Root of the
// memory dir, so no symlink in the memory dir can redirect a write outside
// it. n numbers the install for the crash points.
func installFile(root *os.Root, src, rel string, perm os.FileMode, n int) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("install %s: %w", rel, err)
	}
	defer in.Close()
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install %s: %w", rel, err)
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("install %s: %w", rel, err)
	}
	tmp := filepath.Join(dir, TempPrefix+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("install %s: %w", rel, err)
	}
	if err := finishTemp(f, perm, func(w io.Writer) error { _, err := io.Copy(w, in); return err }); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("install %s: %w", rel, err)
	}
	crashPoint("commit:tmp:%d", n)
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("install %s: %w", rel, err)
	}
	crashPoint("commit:rename:%d", n)
	return nil
}

// SyncDir flushes a directory's entries (new names, renames, removals) to
// disk.
func SyncDir(dir string) error { return fsutil.SyncDir(dir) }
