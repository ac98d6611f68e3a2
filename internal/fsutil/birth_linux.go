package fsutil

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// BornBefore reports whether the file system says rel (inside root) was
// created before t. It is false when it cannot say: statx(2) gives a birth
// time on ext4, xfs, btrfs and recent tmpfs, not on every file system.
func BornBefore(root *os.Root, rel string, t time.Time) bool {
	f, err := root.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	var st unix.Statx_t
	if err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return false
	}
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)).Before(t)
}
