package dream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/spend"
)

// More errors a caller decides on: each is
// matched with errors.Is, whatever context wraps it.
var (
	// ErrUndoConflict: an undo would overwrite changes made after the
	// dream (the text names the files and lines); Undo with force restores
	// those files to their content before the dream.
	ErrUndoConflict = audit.ErrConflict
	// ErrNotStaged: no staged review run has that id (it was never staged,
	// or it was applied or discarded since).
	ErrNotStaged = journal.ErrNotFound
	// ErrAlreadyApplied: the review run was applied before; its changes
	// are in the memory and the audit history (see AlreadyAppliedError).
	ErrAlreadyApplied = errors.New("dream: the staged dream was already applied")
	// ErrNoSuchEntry: the audit history of the memory dir has no entry
	// with that id (Show, Undo).
	ErrNoSuchEntry = audit.ErrNotFound
	// ErrKilled is the cancellation cause that makes a running dream end
	// as killed (rolled back) rather than failed: a supervisor that owns a
	// dream's context, such as the daemon shutting down, cancels it with
	// context.WithCancelCause and this error. `dream kill` has the same
	// effect from another process.
	ErrKilled = errors.New("killed by request")
)

// AlreadyAppliedError says that an Apply found nothing staged because the
// review run landed earlier, and when. It matches ErrAlreadyApplied and
// ErrNotStaged.
type AlreadyAppliedError struct {
	// ID is the review run's dream id.
	ID string
	// Commit is the audit commit that recorded the apply.
	Commit string
	// At is when it was applied.
	At time.Time
}

func (e *AlreadyAppliedError) Error() string {
	s := fmt.Sprintf("dream: %s was already applied", e.ID)
	if !e.At.IsZero() {
		s += " at " + e.At.UTC().Format(time.RFC3339)
	}
	if e.Commit != "" {
		s += fmt.Sprintf(" (audit commit %.12s)", e.Commit)
	}
	return s
}

// Is makes errors.Is(err, ErrAlreadyApplied) and errors.Is(err,
// ErrNotStaged) true.
func (e *AlreadyAppliedError) Is(target error) bool {
	return target == ErrAlreadyApplied || target == ErrNotStaged
}

// notStaged explains a staged run that is not there: when the audit
// history records id as applied, an *AlreadyAppliedError; otherwise err as
// it was.
func (d *Dreamer) notStaged(ctx context.Context, id string, err error) error {
	if !errors.Is(err, journal.ErrNotFound) {
		return err
	}
	h, herr := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if herr != nil {
		return err
	}
	e, serr := h.Show(ctx, id)
	if serr != nil || e.Kind != audit.KindApply {
		return err
	}
	return &AlreadyAppliedError{ID: e.ID, Commit: e.Commit, At: e.StartedAt}
}

// Errors a caller may test with errors.Is.
var (
	// ErrLockHeld: another live holder has the consolidation lock; nothing
	// was sent to any model.
	ErrLockHeld = errors.New("dream: the consolidation lock is held by another live process")
	// ErrRunning: a dream is already running in this process.
	ErrRunning = errors.New("dream: a dream is already running in this process")
	// ErrClosed: the Dreamer was closed.
	ErrClosed = errors.New("dream: dreamer closed")
)

// errNoRunner: the Config has no Runner.
var errNoRunner = errors.New("dream: no runner configured")

// errNoStateDir: neither Config.StateDir nor the environment
// ($XDG_STATE_HOME, $HOME) names a state dir. New refuses rather than keep
// tasks, journals and locks in the working directory.
var errNoStateDir = errors.New("dream: no state dir: set Config.StateDir (or $XDG_STATE_HOME or $HOME)")

// ErrOverBudget matches a dream refused before it starts, or stopped
// before a request, by a spending ceiling, or refused because its model
// has no price. A refused dream sent nothing and changed nothing; a
// stopped one keeps what it finished staged for review.
var ErrOverBudget = spend.ErrOverBudget

// ErrLockLost is matched (errors.Is) by the error of a dream that found,
// at a stage boundary, that another agent had taken the consolidation lock
// over (it follows the seeds' protocol and saw our PID as dead or our mtime
// as stale). Such a dream lands nothing, leaves the other holder's lock file
// alone and fails; its message names the new holder ("lock taken over by
// PID N").
var ErrLockLost = lock.ErrLost

// ErrUnreachable marks a server that did not answer (an etcd cluster, a
// git remote): nothing is known beyond this machine. A dream goes on with
// this machine's memory when its sync remote cannot be reached.
var ErrUnreachable = lock.ErrUnreachable

// ErrNoRemote: `dream sync` without sync_remote.
var ErrNoRemote = fmt.Errorf("dream: no sync_remote configured")

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
