package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/internal/trust"
)

// ErrCredentialDir is matched (errors.Is) by New's error when the memory dir
// or the state dir is, lies inside, or contains a place that holds
// credentials (~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gh, the agents' auth
// files): the model's write tool must never reach them, whatever a host
// layout, a flag or a config file says.
var ErrCredentialDir = trust.ErrCredentialDir

// checkWritableDirs refuses a configuration that would let dream write where
// credentials live. The home directory and the variables that move those
// stores come from this process's environment, as the agents that own them
// read it.
func checkWritableDirs(cfg Config) error {
	home, _ := os.UserHomeDir()
	for _, d := range []struct{ role, dir string }{
		{"memory dir", cfg.MemoryDir},
		{"state dir", cfg.StateDir},
	} {
		if err := trust.CheckWritableDir(d.role, d.dir, os.LookupEnv, home); err != nil {
			return fmt.Errorf("dream: %w", err)
		}
	}
	return nil
}

// ErrLockLost is matched (errors.Is) by the error of a dream that found,
// at a stage boundary, that another agent had taken the consolidation lock
// over (it follows the seeds' protocol and saw our PID as dead or our mtime
// as stale). Such a dream lands nothing, leaves the other holder's lock file
// alone and fails; its message names the new holder ("lock taken over by
// PID N").
var ErrLockLost = lock.ErrLost

// fence checks, at a stage boundary of a running dream, that the lock is
// still ours. It is the only thing that keeps a dream from landing changes
// over another consolidation that started meanwhile: the other agents do not
// know dream's flock, only the PID body and mtime, and those are what it
// re-reads. stage names the boundary for the message.
func (d *Dreamer) fence(stage string) error {
	err := d.lock.Verify()
	if err == nil {
		return nil
	}
	if errors.Is(err, lock.ErrLost) {
		return fmt.Errorf("dream: %w %s; rolled back, nothing landed", err, stage)
	}
	return fmt.Errorf("dream: checking the consolidation lock %s: %w", stage, err)
}

// lockWatchInterval is how often a running dream re-checks its lock. A
// check costs about as much as a few stats; a second is far below any
// model turn, so a dream that lost its lock stops within one turn.
const lockWatchInterval = time.Second

// watchLock re-checks the lock while the agent runs and, as soon as another
// agent has taken it over, cancels the run with the takeover as its cause:
// the dream stops spending tokens on changes it could never land. It ends
// with ctx.
func (d *Dreamer) watchLock(ctx context.Context, cancel context.CancelCauseFunc) {
	go func() {
		t := time.NewTicker(lockWatchInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := d.lock.Verify(); errors.Is(err, lock.ErrLost) {
					cancel(fmt.Errorf("dream: %w during the run; rolled back, nothing landed", err))
					return
				}
			}
		}
	}()
}

// inspectForStatus is Inspect for `dream status`, which must explain a lock
// file it cannot use (a directory, a FIFO, an unreadable file) instead of
// failing: the problem comes back in words, with a holder that is not live.
func (d *Dreamer) inspectForStatus() (LockHolder, string) {
	h, err := d.lock.Inspect()
	if err != nil {
		return LockHolder{Exists: true, Reason: "unusable lock file"}, err.Error()
	}
	return h, ""
}
