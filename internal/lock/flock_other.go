//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package lock

import (
	"os"
	"time"
)

// guardSupported is false here: there is no flock, and the lock falls back
// to the seeds' write-then-reread alone, with its small window in which two
// reclaimers can both win.
const guardSupported = false

// tryFlock is a no-op that always succeeds.
func tryFlock(*os.File) (bool, error) { return true, nil }

// flockFallback is never asked: tryFlock never fails here.
func flockFallback(error) bool { return false }

// unlockFlock is a no-op.
func unlockFlock(*os.File) {}

// setFileTimes sets the lock file's times by path: there is no futimes here.
func setFileTimes(_ *os.File, path string, t time.Time) error {
	return os.Chtimes(path, t, t)
}
