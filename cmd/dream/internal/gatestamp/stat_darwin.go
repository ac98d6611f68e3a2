package gatestamp

import "syscall"

func stat(path string, follow bool) (fileInfo, error) {
	var st syscall.Stat_t
	var err error
	if follow {
		err = syscall.Stat(path, &st)
	} else {
		err = syscall.Lstat(path, &st)
	}
	if err != nil {
		return fileInfo{}, err
	}
	return fileInfo{mode: uint32(st.Mode), dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano()}, nil
}
