package fsutil

import (
	"os"
	"syscall"
	"time"
)

// BornBefore reports whether the file system says rel (inside root) was
// created before t (APFS and HFS+ keep a birth time).
func BornBefore(root *os.Root, rel string, t time.Time) bool {
	fi, err := root.Lstat(rel)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Birthtimespec.Sec == 0 {
		return false
	}
	return time.Unix(st.Birthtimespec.Sec, st.Birthtimespec.Nsec).Before(t)
}
