//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
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

// openNoBlock opens a file for reading without waiting on a FIFO someone
// put at its path.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
