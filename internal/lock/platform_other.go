//go:build !unix

package lock

import "github.com/dreamkit/dream/internal/proc"

// readFlags adds nothing where O_NOFOLLOW does not exist; readState still
// refuses anything but a regular file.
const readFlags = 0

// processAlive is proc.Alive, the one liveness check dream has.
func processAlive(pid int) bool { return proc.Alive(pid) }
