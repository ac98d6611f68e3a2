package offline

import (
	"io/fs"

	"github.com/dreamkit/dream/internal/fsutil"
)

// writeAtomic replaces path with data so that a reader, or a crash, sees the
// old file or the new one and never half of either.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	return fsutil.WriteFileAtomic(path, data, perm)
}
