//go:build dreamcrashtest

package journal

import (
	"os"
	"syscall"
)

// In a binary built with -tags dreamcrashtest (the end-to-end crash tests
// build one; a release binary never has this file), DREAM_CRASH_AT names a
// crash point at which the process SIGKILLs itself, so that the tests can
// prove that the next dream process recovers from a death anywhere in a
// commit.
func init() {
	at := os.Getenv("DREAM_CRASH_AT")
	if at == "" {
		return
	}
	crashHook = func(point string) {
		if point == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is delivered asynchronously
		}
	}
}
