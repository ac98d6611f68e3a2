package dream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

// Lock is one memory's consolidation lock, as a Dreamer uses it. The root
// builds the file lock (the memory dir's .consolidate-lock, which Claude
// Code and codebot share); a backend that excludes other machines (the
// etcd lock the dream command wires through Config.OpenLock) wraps it and
// takes it too, for the agents that know only the file.
//
// The semantics are the file lock's: TryAcquire returns the last
// consolidation time before the dream (its prior), Complete records a new
// one, Rollback puts the prior back, and a holder that died loses the lock
// on its own (a dead PID for the file, an expired lease for etcd). Fence is
// the point after which a dream's changes land, where a backend that can
// lose the lock behind a holder's back proves it still holds it. An error
// meaning "another live holder" matches errors.Is(err, ErrLockHeld).
type Lock interface {
	// Name is "file" or "etcd".
	Name() string
	// Path says where the lock lives: the lock file, or the etcd key prefix.
	Path() string
	// LastConsolidatedAt is the time of the last completed consolidation,
	// zero if there was none.
	LastConsolidatedAt() (time.Time, error)
	// TryAcquire takes the lock and returns the prior time, without waiting.
	TryAcquire() (prior time.Time, err error)
	// Complete moves the lock's time to now and releases it.
	Complete() error
	// Rollback puts the lock's time back to prior and releases it.
	Rollback(prior time.Time) error
	// Verify is the cheap check a running dream makes at each stage: nil
	// while the lock is still ours. It may answer from local state.
	Verify() error
	// Fence proves the lock is still held and records the completion, at
	// once; after it succeeds the dream's changes may land. Complete after
	// Fence only releases.
	Fence(ctx context.Context) error
	// SetTask names the task the holder runs, for other machines' status.
	SetTask(ctx context.Context, taskID string) error
	// Inspect describes the local lock file's holder, with Live also set
	// when another machine holds a distributed lock.
	Inspect() (LockHolder, error)
	// Describe is the full picture for `dream status`.
	Describe(ctx context.Context) (LockBackendStatus, error)
	// Close releases what the backend keeps open (connections).
	Close() error
}

// held is one acquisition of the consolidation lock. It owns the last
// consolidation time before the acquisition, so the only rollback a step can
// make is to that time: two dreams' priors cannot be swapped, and a step
// that never saw it cannot rewind the gate to a time of its own. Exactly
// one of Complete or Rollback takes effect.
type held struct {
	prior time.Time
	lk    Lock

	mu   sync.Mutex
	done bool
}

// acquireOnce takes lk once, bounded by ctx.
func acquireOnce(ctx context.Context, lk Lock) (*held, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prior, err := lk.TryAcquire()
	if err != nil {
		return nil, err
	}
	return &held{prior: prior, lk: lk}, nil
}

// Prior is the last consolidation time before this acquisition.
func (h *held) Prior() time.Time { return h.prior }

// Complete ends a consolidation: the lock's time moves to now.
func (h *held) Complete() error {
	if !h.end() {
		return fmt.Errorf("completing: %w", lock.ErrNotHeld)
	}
	return h.lk.Complete()
}

// Rollback ends anything else: the lock's time goes back to Prior.
func (h *held) Rollback() error {
	if !h.end() {
		return fmt.Errorf("rolling back: %w", lock.ErrNotHeld)
	}
	return h.lk.Rollback(h.prior)
}

// Release is Complete when complete, else Rollback.
func (h *held) Release(complete bool) error {
	if complete {
		return h.Complete()
	}
	return h.Rollback()
}

// Done reports whether Complete or Rollback was called.
func (h *held) Done() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done
}

func (h *held) end() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return false
	}
	h.done = true
	return true
}

// fileLock is the single-machine backend: internal/lock's
// .consolidate-lock behind the Lock interface.
type fileLock struct {
	*lock.Lock
}

// FileLock is the file lock New builds for a memory dir: its
// .consolidate-lock, guarded by an flock on guardPath (in the state dir).
// A backend given to Config.OpenLock receives it; a test of such a
// backend builds it here.
func FileLock(memoryDir, guardPath string) Lock {
	return fileLock{lock.New(memoryDir, guardPath)}
}

func (f fileLock) Name() string { return "file" }

// SetTask is a no-op: the file's body is a PID, as the other agents expect,
// and cannot carry more.
func (f fileLock) SetTask(context.Context, string) error { return nil }

// Fence checks that the lock file still is ours (internal/lock's Verify):
// another agent that knows only the file may have reclaimed it. The file
// has no compare-and-swap, so this narrows the window rather than closing
// it; Complete checks again and reports a takeover.
func (f fileLock) Fence(context.Context) error {
	if !f.Held() {
		return fmt.Errorf("%w: %w", lock.ErrFenced, lock.ErrNotHeld)
	}
	if err := f.Verify(); err != nil {
		return fmt.Errorf("%w: %w", lock.ErrFenced, err)
	}
	return nil
}

// Inspect is internal/lock's look at the file, as the API's holder.
func (f fileLock) Inspect() (LockHolder, error) {
	h, err := f.Lock.Inspect()
	return LockHolder{Exists: h.Exists, PID: h.PID, MTime: h.MTime, Live: h.Live, Dream: h.Dream, Reason: h.Reason}, err
}

// Describe reports the file's holder.
func (f fileLock) Describe(context.Context) (LockBackendStatus, error) {
	h, err := f.Inspect()
	if err != nil {
		return LockBackendStatus{}, err
	}
	s := LockBackendStatus{Backend: "file", Where: f.Path(), Held: h.Live, PID: h.PID, Reason: h.Reason, File: h}
	if h.Live && !h.MTime.IsZero() {
		t := h.MTime
		s.Since = &t
	}
	return s, nil
}

// Close does nothing: the file lock keeps nothing open between calls.
func (f fileLock) Close() error { return nil }
