package dream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
)

// stepOptions say how a step under the consolidation lock is taken.
type stepOptions struct {
	// claim sets the in-process running flag for the step (ErrRunning,
	// ErrClosed); a dream whose funnel already claimed it leaves it unset.
	claim bool
	// keepRecovering runs the step even when finishing a dead dream's
	// journal failed (Recover reports that failure itself); any other step
	// is refused, since it would work on a memory in an unknown state.
	keepRecovering bool
	// releaseErr returns a failure to complete or roll back the lock as the
	// step's error; by default it is logged, because the step's own outcome
	// (a landed dream, a refused undo) is what the caller acts on.
	releaseErr bool
	// wait is how long to wait for a lock another live holder has (see
	// acquire); 0 gives up at once.
	wait time.Duration
	// afterRelease, if set, runs once the lock was taken and released and
	// the cached time refreshed, with the step's final error: a dream's
	// report is final only then.
	afterRelease func(err error)
}

// stepFunc is the work done under the lock. held ends the acquisition: a
// step that must complete at a precise point (before its telemetry) calls
// held.Complete itself; otherwise complete says whether the step counts as
// a consolidation (the lock's time moves forward) or not (it is rewound to
// held.Prior). rec is what recovering a dead dream's journal did.
type stepFunc func(held *held, rec journal.Recovery) (complete bool, err error)

// locked is the one locked step every change of the memory takes: dreams,
// Undo, Apply, Sync and Recover. It acquires the lock (a live holder comes
// back as a *LockHeldError), finishes what a dead dream left in the journal,
// runs step, then completes or rolls back the lock and refreshes the cached
// last-consolidation time that the gates read.
func (d *Dreamer) locked(ctx context.Context, o stepOptions, step stepFunc) (err error) {
	if o.claim {
		release, err := d.claim()
		if err != nil {
			return err
		}
		defer release()
	}
	held, err := d.acquire(ctx, o.wait)
	if err != nil {
		err = d.lockHeld(ctx, err)
		if he, ok := err.(*LockHeldError); ok {
			he.Waited = o.wait
		}
		return err
	}
	complete := false
	defer func() {
		if !held.Done() {
			// A step that changed the memory says so with complete even
			// when a later part of it failed (Apply landed the files but
			// could not record them): the consolidation happened, so the
			// time gate must not reopen for it.
			if relErr := held.Release(complete); relErr != nil {
				relErr = fmt.Errorf("dream: releasing the consolidation lock: %w", relErr)
				if o.releaseErr {
					err = errors.Join(err, relErr)
				} else {
					d.cfg.Logf("%v", relErr)
				}
			}
		}
		d.setLast(d.lastFromDisk())
		if o.afterRelease != nil {
			o.afterRelease(err)
		}
	}()
	rec, err := d.recoverJournal(ctx)
	if err != nil {
		err = fmt.Errorf("dream: recovering an interrupted dream: %w", err)
		if !o.keepRecovering {
			return err
		}
	}
	if step == nil {
		return err
	}
	complete, serr := step(held, rec)
	return errors.Join(err, serr)
}

// acquire takes the lock, and while another live holder has it tries again
// until wait has passed, as git waits for its index lock: a pause that
// grows from 50 ms to a second, so a short holder (a sync) is followed at
// once and a long one (a dream) is not asked twenty times a second.
func (d *Dreamer) acquire(ctx context.Context, wait time.Duration) (*held, error) {
	deadline := time.Now().Add(wait)
	pause := 50 * time.Millisecond
	for {
		held, err := acquireOnce(ctx, d.lock)
		left := time.Until(deadline)
		if err == nil || !errors.Is(err, lock.ErrHeld) || left <= 0 {
			return held, err
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for the consolidation lock: %w", context.Cause(ctx))
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}
