package dream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

// LockHeldError says who holds the consolidation lock. It matches
// errors.Is(err, ErrLockHeld), so callers that only need to know "held" keep
// testing that; callers that show the user who to wait for use errors.As.
type LockHeldError struct {
	// LockHolder is the holder as the backend described it (PID, Host,
	// Since, TaskID, Backend), with the PID the lock file names when the
	// backend knew none; its Reason is the lock's own one-line account.
	LockHolder
	// Waited is how long the caller waited for the holder to finish
	// (SyncOptions.Wait).
	Waited time.Duration
}

// Error reads as one sentence: "the consolidation lock is held by pid 42
// on host a (dream 20261201-…) since 2026-12-01T10:00:00Z".
func (e *LockHeldError) Error() string {
	var b strings.Builder
	if e.Waited > 0 {
		fmt.Fprintf(&b, "after waiting %s, the consolidation lock is still held", e.Waited)
	} else {
		b.WriteString("the consolidation lock is held")
	}
	switch {
	case e.PID > 0 && e.Host != "":
		fmt.Fprintf(&b, " by pid %d on %s", e.PID, e.Host)
	case e.PID > 0:
		fmt.Fprintf(&b, " by pid %d", e.PID)
	case e.Host != "":
		fmt.Fprintf(&b, " by %s", e.Host)
	}
	if e.TaskID != "" {
		fmt.Fprintf(&b, " (dream %s)", e.TaskID)
	}
	if e.Since != nil {
		fmt.Fprintf(&b, " since %s", e.Since.UTC().Format(time.RFC3339))
	} else if e.Reason != "" && e.PID == 0 && e.Host == "" {
		fmt.Fprintf(&b, ": %s", e.Reason)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrLockHeld) true.
func (e *LockHeldError) Is(target error) bool { return target == ErrLockHeld }

// lockHeld turns the backend's "held" error into a *LockHeldError naming the
// holder; any other acquisition error is wrapped with context.
func (d *Dreamer) lockHeld(ctx context.Context, err error) error {
	if !errors.Is(err, lock.ErrHeld) {
		return fmt.Errorf("dream: acquiring the consolidation lock: %w", err)
	}
	he := &LockHeldError{}
	if st, derr := d.lock.Describe(ctx); derr == nil {
		he.LockHolder = st
		if he.PID == 0 && st.File != nil {
			he.PID = st.File.PID
		}
	}
	he.Reason = strings.TrimPrefix(err.Error(), lock.ErrHeld.Error()+": ")
	return he
}
