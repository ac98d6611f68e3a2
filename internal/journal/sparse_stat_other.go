//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package journal

import (
	"io/fs"
	"os"
)

// device is unknown here: a sparse staging then has no file-system clock
// and compares every written file's original by content (see resolveBase).
func device(fs.FileInfo) (uint64, bool) { return 0, false }

// openNoFollow opens a regular file for reading, refusing (errNotRegular)
// anything else at its path.
func openNoFollow(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errNotRegular
	}
	return os.Open(path)
}
