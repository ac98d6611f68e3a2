package offline

import (
	"fmt"
	"io/fs"
	"os"

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
