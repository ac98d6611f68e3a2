//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package journal

import "os"

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

// holdFlags open a file only to hold it (see apply).
const holdFlags = os.O_RDONLY
