package task

import "github.com/dreamkit/dream/internal/proc"

// processAlive is proc.Alive, the liveness check the lock uses too.
func processAlive(pid int) bool { return proc.Alive(pid) }
