//go:build unix

package nanobot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// SessionsLockName is the lock nanobot's JsonlSessionStore holds around
// every read and write of the session files of a directory
// (manager.py, _SESSION_FILES_LOCK_FILENAME). py-filelock's UnixFileLock is
// an flock, so taking the same flock excludes nanobot too.
const SessionsLockName = ".session-files.lock"

// ErrSessionsLocked: another process holds the sessions lock.
var ErrSessionsLocked = errors.New("compact: the session files are locked by another process")

// lockSessions takes the sessions lock of dir without waiting; release
// frees it.
func lockSessions(dir string) (release func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, SessionsLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrSessionsLocked
		}
		return nil, fmt.Errorf("compact: locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
