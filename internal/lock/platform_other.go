//go:build !unix

package lock

// readFlags adds nothing where O_NOFOLLOW does not exist; readState still
// refuses anything but a regular file.
const readFlags = 0

// processAlive cannot probe a PID portably here, so it assumes any plausible
// PID is alive: a lock younger than StaleAfter is then never stolen, which is
// the safe side.
func processAlive(pid int) bool {
	return pid > 0 && pid <= MaxPID
}
