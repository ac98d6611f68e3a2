// Package lockbackend is the consolidation lock seen as one interface with
// two implementations: the .consolidate-lock file of internal/lock, which
// excludes the processes of one machine, and an etcd lease (package
// etcdlock), which excludes machines that share one memory through a git
// remote. The dreamer codes against Backend and never knows which it has.
//
// The semantics are the file lock's: Acquire returns a Held that owns the
// last consolidation time before the dream (its prior), Held.Complete
// records a new one, Held.Rollback puts the prior back, and a holder that
// died loses the lock on its own (a dead PID for the file, an expired lease for etcd). Fence is the one
// addition: the point after which a dream's changes land, where a backend
// that can lose the lock behind a holder's back (a lease expiring while the
// process was paused) proves it still holds it.
package lockbackend

import (
	"context"
	"errors"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

// Backend names.
const (
	NameFile = "file"
	NameEtcd = "etcd"
)

// ErrUnreachable marks a backend whose server did not answer (etcd down,
// or this machine cut off from it): nothing is known of the holder or of
// the last consolidation beyond this machine's file.
var ErrUnreachable = errors.New("unreachable")

// ErrFenced is returned by Fence when the lock was lost between Acquire
// and the landing of the dream's changes: the dream must roll back.
var ErrFenced = errors.New("consolidation lock lost before the commit (fenced): nothing landed")

// Backend is one memory's consolidation lock.
//
// The methods shaped like internal/lock's take no context, so that the
// dreamer's call sites stay those of the file lock; a backend that talks to a
// server bounds each of them with its own timeout. Errors from Acquire that
// mean "another live holder" satisfy errors.Is(err, lock.ErrHeld).
//
// Completing and rolling back are not methods of Backend but of the Held
// that Acquire returns, so that no caller can rewind the lock to a time
// other than the one its own acquisition found.
type Backend interface {
	// Name is NameFile or NameEtcd.
	Name() string
	// Path says where the lock lives: the lock file, or the etcd key prefix.
	Path() string
	// LastConsolidatedAt is the time of the last completed consolidation,
	// zero if there was none.
	LastConsolidatedAt() (time.Time, error)
	// Acquire takes the lock. The Held it returns ends the acquisition
	// (Complete or Rollback) and knows the time to roll back to.
	Acquire(ctx context.Context) (*Held, error)
	// Verify is the cheap check a running dream makes at each stage
	// boundary and while the agent runs: nil while the lock is still ours,
	// else an error that is errors.Is(err, lock.ErrLost). It may answer from
	// local state; Fence is the authoritative check.
	Verify() error
	// SetTask names the task the holder runs, for other machines' status.
	SetTask(ctx context.Context, taskID string) error
	// Fence proves the lock is still held and records the completion, at
	// once; after it succeeds the dream's changes may land. errors.Is(err,
	// ErrFenced) when the lock was lost. Held.Complete after Fence only
	// releases.
	Fence(ctx context.Context) error
	// Inspect describes the local lock file's holder, as internal/lock does,
	// with Live also set when another machine holds a distributed lock.
	Inspect() (lock.Holder, error)
	// Describe is the full picture for `dream status`.
	Describe(ctx context.Context) (Status, error)
	// Close releases what the backend keeps open (connections).
	Close() error
}

// Status is what `dream status` shows of the lock.
type Status struct {
	// Backend is NameFile or NameEtcd.
	Backend string `json:"backend"`
	// Where is the lock file, or the etcd endpoints and key prefix.
	Where string `json:"where"`
	// Held says some live holder has the lock (here or on another machine).
	Held bool `json:"held"`
	// Host, PID and TaskID name the holder; empty or zero when unknown.
	Host   string `json:"host,omitempty"`
	PID    int    `json:"pid,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	// Since is when the holder acquired, when known.
	Since *time.Time `json:"since,omitempty"`
	// LeaseRemaining is the holder's lease time left (etcd only): how soon
	// another machine could take over if the holder stopped renewing it.
	LeaseRemaining *time.Duration `json:"lease_remaining_ns,omitempty"`
	// Reason is a one-line human account.
	Reason string `json:"reason"`
	// Unreachable says the lock server did not answer: Held is then the
	// safe guess, and File all that is known.
	Unreachable bool `json:"unreachable,omitempty"`
	// File is the local .consolidate-lock, taken with every backend.
	File lock.Holder `json:"file"`
}
