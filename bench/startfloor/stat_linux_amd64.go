package startfloor

import (
	"syscall"
	"unsafe"
)

// mtimeAt is the mtime (Unix nanoseconds) of name in the directory open as
// fd, by fstatat(2) without following a symlink: one path component to
// resolve, as find(1) does.
func mtimeAt(fd int, _, name string) (int64, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return 0, err
	}
	const atSymlinkNoFollow = 0x100
	var st syscall.Stat_t
	_, _, errno := syscall.Syscall6(syscall.SYS_NEWFSTATAT, uintptr(fd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&st)), atSymlinkNoFollow, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return st.Mtim.Sec*1e9 + st.Mtim.Nsec, nil
}
