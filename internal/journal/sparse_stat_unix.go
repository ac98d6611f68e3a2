//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
	"io/fs"
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
