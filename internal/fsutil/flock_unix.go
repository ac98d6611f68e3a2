//go:build unix

package fsutil

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// LockFile opens path (creating it, mode 0600) and takes an exclusive flock
// on it, waiting for another process that holds it; unlock releases the
// lock and closes the file. The flock belongs to the open file, so a
// process that dies holding it releases it with its descriptors: a crash
// never leaves it taken.
func LockFile(path string) (f *os.File, unlock func(), err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
