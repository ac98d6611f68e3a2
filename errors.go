package dream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
)

// Errors a caller decides on, beside ErrLockHeld (lock.go): each is
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
