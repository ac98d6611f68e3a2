package audit

import "context"

// Git runs one git command against the history with the same isolation as
// every other command here (no hooks, no user or system configuration, fixed
// identity, no inherited GIT_* variables), for packages that move the
// history elsewhere (internal/gitsync) and must not weaken it.
func (h *History) Git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return h.git(ctx, stdin, args...)
}

// GitEnv is Git with extra environment variables (GIT_INDEX_FILE, for a
// scratch index that leaves the history's own untouched).
func (h *History) GitEnv(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	return h.gitEnv(ctx, env, stdin, args...)
}

// GitExitCode is git's exit status in an error from Git, or -1 when git did
// not run to an exit (not found, killed, cancelled).
func GitExitCode(err error) int { return exitCode(err) }
