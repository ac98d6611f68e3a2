package journal

import (
	"fmt"
	"os"
	"syscall"
)

func ctimeOf(st *syscall.Stat_t) (sec, nsec int64) { return st.Ctim.Sec, st.Ctim.Nsec }

// syncFS flushes every dirty file and directory of the file system that
// holds dir, in one call (syncfs(2)): for a commit of thousands of files,
// one flush instead of one fsync per file and per directory.
func syncFS(dir string) (bool, error) {
	if sysSyncfs == 0 {
		return false, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return true, err
	}
	defer f.Close()
	if _, _, errno := syscall.Syscall(sysSyncfs, f.Fd(), 0, 0); errno != 0 {
		return true, fmt.Errorf("syncfs %s: %w", dir, errno)
	}
	return true, nil
}

const canSyncFS = sysSyncfs != 0
