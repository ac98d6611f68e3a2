//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import "syscall"

func ctimeOf(st *syscall.Stat_t) (sec, nsec int64) {
	return int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)
}

// syncFS is not available: the caller syncs file by file.
func syncFS(string) (bool, error) { return false, nil }

const canSyncFS = false
