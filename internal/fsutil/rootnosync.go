package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomicInNoSync is WriteFileAtomicIn without the fsyncs, as
// WriteFileAtomicNoSync is WriteFileAtomic without them: every step
// (creating parents, the temporary file, the rename) goes through root, so a
// symlink cannot redirect the write outside it, and a reader sees the old
// file or the new one. It is for a dream's staging files, which the
// journal's commit makes durable.
func WriteFileAtomicInNoSync(root *os.Root, rel string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(rel)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	return replace(root, rel, writeAll(data), perm, false)
}
