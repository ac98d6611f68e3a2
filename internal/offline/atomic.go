package offline

import (
	"io/fs"

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
