//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
	"errors"
	"os"
	"syscall"
)

// openNoFollow opens a regular file for reading without following a
// symlink at its path (errNotRegular) or waiting on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errNotRegular
	}
	return f, err
}

// holdFlags open a file only to hold it (see apply): without following a
// symlink or waiting on a FIFO.
const holdFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOFOLLOW
