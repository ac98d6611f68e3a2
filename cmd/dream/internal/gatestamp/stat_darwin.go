package gatestamp

import "syscall"

func infoOf(st *syscall.Stat_t) fileInfo {
	return fileInfo{mode: uint32(st.Mode), dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano()}
}
