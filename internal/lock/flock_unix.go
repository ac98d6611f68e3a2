//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package lock

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// guardSupported says that flock really excludes other processes on this
// system.
const guardSupported = true

// tryFlock takes an exclusive, non-blocking flock on f. It reports false,
// with no error, when another open file description holds it. The kernel
// drops the flock when the last descriptor closes, so a killed process
// cannot leave it behind.
func tryFlock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

// flockFallback reports whether a flock error means the file system cannot
// flock at all (some FUSE and network mounts), as opposed to a real failure.
func flockFallback(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL)
}

// unlockFlock drops the flock before the file is closed; closing alone would
// also do, this only makes the release immediate and explicit.
func unlockFlock(f *os.File) {
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// setFileTimes sets the lock file's atime and mtime to t, to the
// nanosecond (a rewound mtime must equal the prior exactly), never through a
// symlink. The caller has just checked that path names f's inode.
func setFileTimes(_ *os.File, path string, t time.Time) error {
	ts, err := unix.TimeToTimespec(t)
	if err != nil {
		return err
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}
