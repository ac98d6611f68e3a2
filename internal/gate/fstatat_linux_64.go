//go:build linux && (amd64 || arm64)

package gate

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatNoFollow is fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) with the
// C string built in the caller's reusable buf: unix.Fstatat allocates one per
// call, which is one allocation per transcript in a scan of thousands. On
// these architectures the call is newfstatat with unix.Stat_t as its buffer
// (what unix.Fstatat itself issues).
func fstatatNoFollow(dirfd int, name string, st *unix.Stat_t, buf *[]byte) error {
	b := append(append((*buf)[:0], name...), 0)
	*buf = b
	_, _, errno := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&b[0])),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
