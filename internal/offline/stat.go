package offline

import (
	"io/fs"
	"time"
)

// fileStat is what the cache compares before it trusts an entry without
// reading its file: device, inode, size, and modification and change times
// in nanoseconds. The change time is the one a writer cannot set back, so
// an edit of the same size whose mtime is restored (touch -r, an editor
// that keeps it) is still seen; a file replaced by a rename has another
// inode. The zero value means "no stat": the file is read and hashed.
type fileStat struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64
}

func (s fileStat) valid() bool { return s != fileStat{} }

// racyWindow is how recent a file's last change may be for its stat to be
// trusted. File times come from a coarse clock (a tick of a few
// milliseconds), so a file changed again within the tick in which it was
// read would keep its stat with other bytes; a stat is recorded only for a
// file whose last change is older than this when its bytes were read, as
// git does for its racily clean entries.
const racyWindow = 100 * time.Millisecond

// trustedStat is the stat to record for bytes of the file read (or known)
// at readAt: info's, unless the file changed too recently (or in the
// future) to tell a later change by its stat.
func trustedStat(info fs.FileInfo, readAt time.Time) fileStat {
	st, ok := statOf(info)
	if !ok {
		return fileStat{}
	}
	return trusted(st, readAt)
}

// trusted is st, for bytes read at readAt, unless the file changed too
// recently (or in the future) to tell a later change by its stat.
func trusted(st fileStat, readAt time.Time) fileStat {
	w := racyWindow
	if st.Mtime%1e9 == 0 && st.Ctime%1e9 == 0 {
		w = 2 * time.Second // a file system with whole-second times
	}
	if readAt.UnixNano()-max(st.Mtime, st.Ctime) <= int64(w) {
		return fileStat{}
	}
	return st
}
