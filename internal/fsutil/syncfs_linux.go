package fsutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// SyncFS flushes every file and directory of the file system that holds
// dir with one syncfs(2): the data, the inodes and the directory blocks,
// then the device's write cache, as fsync of each would. Flushing
// thousands of files one by one costs more (each fsync writes its inode's
// table block on its own; syncfs writes each block once). It also flushes
// whatever else is dirty on that file system, so it pays only for many
// files.
//
// ok is false, with nothing done, where syncfs cannot be trusted, and the
// caller then flushes file by file: on a file system that is not the local
// kernel's (LocalKernelFS: a FUSE or network mount's syncfs need not reach
// the storage, where an fsync does), and before Linux 5.8, whose syncfs
// did not report writeback errors.
func SyncFS(dir string) (ok bool, err error) {
	if !syncfsReportsErrors() || !LocalKernelFS(dir) {
		return false, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return true, err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return true, fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return true, nil
}

// SameFS reports whether every directory in dirs is on dir's file system,
// so that a SyncFS of dir flushes them and the files in them (a file is on
// its directory's file system; only root can bind-mount one over another).
// A directory it cannot stat is not.
func SameFS(dir string, dirs []string) bool {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return false
	}
	for _, p := range dirs {
		var pt unix.Stat_t
		if unix.Stat(p, &pt) != nil || pt.Dev != st.Dev { // Stat: a symlinked directory holds its files on its target's file system
			return false
		}
	}
	return true
}

// syncfsReportsErrors is whether this kernel's syncfs returns writeback
// errors: Linux 5.8 and later track them per file system and report them
// to syncfs (syncfs(2), ERRORS).
var syncfsReportsErrors = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
})

// kernelAtLeast parses a release such as "6.1.0-18-amd64" and compares its
// first two numbers; one it cannot parse is not.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	end := 0
	for end < len(parts[1]) && parts[1][end] >= '0' && parts[1][end] <= '9' {
		end++
	}
	mnr, err := strconv.Atoi(parts[1][:end])
	if err != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}
