//go:build unix

package task

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a running process (kill(pid, 0)
// succeeds or is refused with EPERM).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
