//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package lock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// guardSupported says that the guard file's flock really excludes other
// processes on this system.
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

// unlockFlock drops the flock before the file is closed; closing alone would
// also do, this only makes the release immediate and explicit.
func unlockFlock(f *os.File) {
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
