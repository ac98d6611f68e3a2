package dream

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	Describe(ctx context.Context) (LockHolder, error)
	// Close releases what the backend keeps open (connections).
	Close() error
}

// LockHolder is the consolidation lock as a would-be acquirer sees it: who
// holds it, here or on another machine. Inspect fills the local file's
// fields (Exists, MTime, Dream); Describe the backend's, with the local
// file beside a distributed lock in File. A *LockHeldError carries one.
type LockHolder struct {
	// Backend is "file" or "etcd"; empty for the file's own look.
	Backend string `json:"backend,omitempty"`
	// Where is the lock file, or the etcd endpoints and key prefix.
	Where string `json:"where,omitempty"`
	// Held says an acquirer would yield: some live holder has the lock
	// (here or on another machine), or its server cannot be asked.
	Held bool `json:"held"`
	// Host, PID and TaskID name the holder; empty or zero when unknown.
	// PID is the one the lock file names for the file's own look.
	Host   string `json:"host,omitempty"`
	PID    int    `json:"pid"`
	TaskID string `json:"task_id,omitempty"`
	// Since is when the holder acquired, when known.
	Since *time.Time `json:"since,omitempty"`
	// LeaseRemaining is the holder's etcd lease time left: how soon another
	// machine could take over if the holder stopped renewing it.
	LeaseRemaining *time.Duration `json:"lease_remaining_ns,omitempty"`
	// Reason is a one-line human account, e.g. "live pid 123 (12m old)".
	Reason string `json:"reason"`
	// Unreachable says the lock server (etcd) did not answer: Held is the
	// safe guess, File all that is known.
	Unreachable bool `json:"unreachable,omitempty"`
	// Problem is set when the lock file cannot be used at all (a
	// directory, a FIFO, unreadable): no dream can start until it is fixed.
	Problem string `json:"problem,omitempty"`
	// Exists says there is a lock file at all; MTime is its mtime, the last
	// consolidation time; Dream says its holder is a dream process. A
	// backend's own look leaves them zero (see File).
	Exists bool      `json:"exists,omitzero"`
	MTime  time.Time `json:"mtime,omitzero"`
	Dream  bool      `json:"dream,omitzero"`
	// File is the local .consolidate-lock beside a distributed lock, which
	// is taken with every backend.
	File *LockHolder `json:"file,omitempty"`
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
	return LockHolder{Exists: h.Exists, PID: h.PID, MTime: h.MTime, Held: h.Live, Dream: h.Dream, Reason: h.Reason}, err
}

// Describe reports the file's holder.
func (f fileLock) Describe(context.Context) (LockHolder, error) {
	h, err := f.Inspect()
	if err != nil {
		return LockHolder{}, err
	}
	s := LockHolder{Backend: "file", Where: f.Path(), Held: h.Held, PID: h.PID, Reason: h.Reason, File: &h}
	if h.Held && !h.MTime.IsZero() {
		t := h.MTime
		s.Since = &t
	}
	return s, nil
}

// Close does nothing: the file lock keeps nothing open between calls.
func (f fileLock) Close() error { return nil }

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
