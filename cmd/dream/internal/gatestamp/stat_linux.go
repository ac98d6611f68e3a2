package gatestamp

import "syscall"

func infoOf(st *syscall.Stat_t) fileInfo {
	return fileInfo{mode: st.Mode, dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}
