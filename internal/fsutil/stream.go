package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomicInFrom is WriteFileAtomicIn with the content streamed by fill
// instead of held in memory: restoring a 200 MB file costs a buffer, not
// the file. fill writes the content; an error from it leaves rel as it was.
func WriteAtomicInFrom(root *os.Root, rel string, perm os.FileMode, fill func(w io.Writer) error) error {
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	tmp := filepath.Join(dir, TempPrefix+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		return fmt.Errorf("replacing %s: %w", rel, err)
	}
	ok = true
	return SyncDirIn(root, dir)
}
