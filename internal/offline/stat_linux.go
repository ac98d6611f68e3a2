package offline

import (
	"io/fs"
	"syscall"
)

// statOf is the identity of the file behind info, or false when the
// platform does not say it.
func statOf(info fs.FileInfo) (fileStat, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, false
	}
	return fileStat{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: int64(st.Size),
		Mtime: int64(st.Mtim.Sec)*1e9 + int64(st.Mtim.Nsec),
		Ctime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec),
	}, true
}
