//go:build linux

package gate

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fastStatAvailable: on Linux the scan stats each transcript with fstatat
// relative to the open directory, which skips re-resolving the whole path
// from the root for every file (what DirEntry.Info's lstat of a joined path
// does).
const fastStatAvailable = true

// openDir opens path as a directory. Below the scan root it refuses to
// follow a symlink (O_NOFOLLOW), closing the race in which a listed
// directory is swapped for a link before it is opened.
func openDir(path string, followRoot bool) (*os.File, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !followRoot {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Open(path, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// statAfter reports whether the regular file name in directory d was
// modified strictly after since. A file that vanished or became something
// else since it was listed does not count.
func statAfter(d *os.File, name string, since time.Time) bool {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return false
		}
		return time.Unix(st.Mtim.Sec, st.Mtim.Nsec).After(since)
	}
}
