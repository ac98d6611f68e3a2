//go:build unix

package nanobot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockLog opens the log for appending and takes an exclusive flock on it.
// The lock is on the log itself, not a side file, so that no extra file
// appears in the user's memory dir; because compaction replaces the log by
// rename, a holder re-checks after locking that its descriptor is still the
// file at path and starts over if not. Waiting polls with a short back-off
// so that ctx can end it.
func lockLog(ctx context.Context, path string) (*os.File, error) {
	delay := 200 * time.Microsecond
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("history: open %s: %w", path, err)
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
				f.Close()
				return nil, fmt.Errorf("history: lock %s: %w", path, err)
			}
			select {
			case <-ctx.Done():
				f.Close()
				return nil, fmt.Errorf("history: waiting for the lock on %s: %w", path, context.Cause(ctx))
			case <-time.After(delay):
			}
			if delay < 5*time.Millisecond {
				delay *= 2
			}
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close() // replaced under us (compaction): lock the new file
	}
}

// unlockLog releases the lock by closing the descriptor.
func unlockLog(f *os.File) error { return f.Close() }
