//go:build linux && !(amd64 || arm64)

package gate

import "golang.org/x/sys/unix"

// fstatatNoFollow is unix.Fstatat with AT_SYMLINK_NOFOLLOW; buf is unused
// here (see fstatat_linux_64.go).
func fstatatNoFollow(dirfd int, name string, st *unix.Stat_t, _ *[]byte) error {
	return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
}
