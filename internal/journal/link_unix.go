//go:build unix

package journal

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// linkIn hard-links the file at src (a staged file: a path in the state
// dir) to name (a path relative to root) inside the memory dir, through
// the directory root opens, so that no link inside the memory dir can
// send the new name elsewhere.
func linkIn(root *os.Root, src, name string) error {
	dir, err := root.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer dir.Close()
	return unix.Linkat(unix.AT_FDCWD, src, int(dir.Fd()), filepath.Base(name), 0)
}
