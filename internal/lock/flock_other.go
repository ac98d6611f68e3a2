//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package lock

import "os"

// guardSupported is false here: there is no flock, and the lock falls back
// to the seeds' write-then-reread alone, with its small window in which two
// reclaimers can both win.
const guardSupported = false

// tryFlock is a no-op that always succeeds.
func tryFlock(*os.File) (bool, error) { return true, nil }

// unlockFlock is a no-op.
func unlockFlock(*os.File) {}
