//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// device returns the file system a file lives on, to tell whether the
// state dir and the memory dir share one clock (see Txn.readClock).
func device(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

// openNoFollow opens a regular file for reading without following a
// symlink at its path (errNotRegular) or waiting on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errNotRegular
	}
	return f, err
}
