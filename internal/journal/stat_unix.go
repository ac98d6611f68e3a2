//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
	"io/fs"
	"syscall"
)

// identity returns what, beside size and mtime, tells that a file is still
// the same version: its inode and change time. Any write, rename over, chmod
// or link changes one of them, so an equal identity means equal content
// without reading it (the same reasoning as git's index).
func identity(info fs.FileInfo) (ino uint64, ctimeNs int64, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	sec, nsec := ctimeOf(st)
	return uint64(st.Ino), sec*1e9 + nsec, true
}
