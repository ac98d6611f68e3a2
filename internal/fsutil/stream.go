package fsutil

import (
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
	if err := replace(root, rel, fill, perm, true); err != nil {
		return err
	}
	return SyncDirIn(root, dir)
}
