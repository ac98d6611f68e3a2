//go:build unix

package lock

import (
	"syscall"

	"github.com/dreamkit/dream/internal/proc"
)

// readFlags makes reading the lock file refuse a symlink and never block on
// a FIFO planted at its path.
const readFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// processAlive is proc.Alive, the one liveness check dream has.
func processAlive(pid int) bool { return proc.Alive(pid) }
