//go:build unix

package proc

import (
	"errors"
	"syscall"
)

// Alive reports whether pid names a running process: kill(pid, 0) succeeds,
// or fails with EPERM (alive but owned by another user). PIDs <= 0 are never
// alive: kill would address a process group or every process.
func Alive(pid int) bool {
	if pid <= 0 || pid > MaxPID {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
