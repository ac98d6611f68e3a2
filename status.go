package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lockbackend"
)

// LockStatus describes the consolidation lock's holder.
type LockStatus struct {
	Path   string `json:"path"`
	Held   bool   `json:"held"`
	PID    int    `json:"pid"`
	Reason string `json:"reason"`
	// Problem is set when the lock file cannot be used at all (a directory,
	// a FIFO, unreadable): no dream can start until it is fixed.
	Problem string `json:"problem,omitempty"`
}

// StatusReport says why a dream would or would not start now.
type StatusReport struct {
	// Job names the job (JobSpec); empty for the memory dream, and then
	// MemoryDir is the memory, else the job's write dir.
	Job                  string      `json:"job,omitempty"`
	Enabled              bool        `json:"enabled"`
	MemoryDir            string      `json:"memory_dir"`
	SessionsDir          string      `json:"sessions_dir"`
	LastConsolidatedAt   *time.Time  `json:"last_consolidated_at"`
	HoursSinceLast       *float64    `json:"hours_since_last"`
	SessionsTouchedSince int         `json:"sessions_touched_since"`
	MinHours             float64     `json:"min_hours"`
	MinSessions          int         `json:"min_sessions"`
	Lock                 LockStatus  `json:"lock"`
	Gates                []GateState `json:"gates"`
	Next                 string      `json:"next"`
	Recovered            []string    `json:"recovered,omitempty"`
	Warnings             []string    `json:"warnings,omitempty"`

	// LockBackend is the lock's backend and holder wherever it runs.
	LockBackend LockBackendStatus `json:"lock_backend"`
	// Sync compares the memory's history with sync_remote; nil without one.
	Sync *SyncState `json:"sync,omitempty"`
	// LastConsolidatedFrom is set when the lock server could not be asked:
	// LastConsolidatedAt is then this machine's lock file's time.
	LastConsolidatedFrom string `json:"last_consolidated_from,omitempty"`
}

// LockBackendStatus is the consolidation lock seen through its backend:
// the file alone, or etcd with the file beside it.
type LockBackendStatus struct {
	// Backend is "file" or "etcd".
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
	// LeaseRemaining is the holder's etcd lease time left: how soon another
	// machine could take over if the holder stopped renewing it.
	LeaseRemaining *time.Duration `json:"lease_remaining_ns,omitempty"`
	// Reason is a one-line human account.
	Reason string `json:"reason"`
	// Unreachable says the lock server (etcd) did not answer a short
	// probe: Held is the safe guess, File all that is known.
	Unreachable bool `json:"unreachable,omitempty"`
	// File is the local .consolidate-lock, taken with every backend.
	File LockHolder `json:"file"`
}

// LockHolder is the local .consolidate-lock as a would-be acquirer sees it.
type LockHolder struct {
	// Exists says there is a lock file at all.
	Exists bool `json:"exists"`
	// PID is the holder named in the body; 0 when it is empty or garbage.
	PID int `json:"pid"`
	// MTime is the lock file's mtime, the last consolidation time.
	MTime time.Time `json:"mtime"`
	// Live says an acquirer would yield to this holder.
	Live bool `json:"live"`
	// Dream says the holder is a dream process.
	Dream bool `json:"dream"`
	// Reason is a human explanation, e.g. "live pid 123 (12m old)".
	Reason string `json:"reason"`
}

// lockBackendStatusOf converts the backend's status at the API's boundary.
func lockBackendStatusOf(s lockbackend.Status) LockBackendStatus {
	f := s.File
	return LockBackendStatus{Backend: s.Backend, Where: s.Where, Held: s.Held, Host: s.Host, PID: s.PID, TaskID: s.TaskID,
		Since: s.Since, LeaseRemaining: s.LeaseRemaining, Reason: s.Reason, Unreachable: s.Unreachable,
		File: LockHolder{Exists: f.Exists, PID: f.PID, MTime: f.MTime, Live: f.Live, Dream: f.Dream, Reason: f.Reason}}
}

// Status evaluates every gate without starting a dream. It re-reads the lock
// mtime (a hand edit may have moved it back) and, like every dream process
// that looks, recovers a dream whose holder died: its staging is discarded
// or its half-done commit rolled forward, and the lock mtime rewound so the
// time gate reopens.
func (d *Dreamer) Status(ctx context.Context) (StatusReport, error) {
	s := StatusReport{
		Job:         d.jobName(),
		Enabled:     d.enabledOpen(nil),
		MemoryDir:   d.cfg.MemoryDir,
		SessionsDir: d.cfg.SessionsDir,
		MinHours:    d.cfg.Settings.MinHours,
		MinSessions: d.cfg.Settings.MinSessions,
	}
	if rec, err := d.Recover(ctx); err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	} else {
		s.Recovered = rec
	}
	// The remote's fetch is the slow part: it runs beside the rest.
	synced := make(chan *SyncState, 1)
	go func() { synced <- d.syncStatus(ctx) }()
	now := d.cfg.Now()
	last, err := d.lock.LastConsolidatedAt()
	b, derr := d.lock.Describe(ctx)
	if derr != nil {
		s.Warnings = append(s.Warnings, derr.Error())
	} else {
		s.LockBackend = lockBackendStatusOf(b)
	}
	if errors.Is(err, lockbackend.ErrUnreachable) && derr == nil && b.File.Exists {
		// Cut off from the lock server: this machine's file is what is
		// known, and it is said to be only that.
		last, err = b.File.MTime, nil
		s.LastConsolidatedFrom = "this machine's lock file: " + b.Backend + " unreachable"
	}
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("reading the consolidation lock: %v", err))
	}
	d.setLast(last)
	if !last.IsZero() {
		l := last
		h := now.Sub(last).Hours()
		s.LastConsolidatedAt, s.HoursSinceLast = &l, &h
	}

	// Status shows every gate, so it walks past a closed one; it does not
	// consume the scan throttle, as a look must not delay a dream.
	d.mu.Lock()
	p := probe{ctx: ctx, now: now, last: last, lastScan: d.lastScan, running: d.running}
	d.mu.Unlock()
	if d.cfg.PersistThrottle {
		p.lastScan = d.readThrottle()
	}
	closed := d.walk(&p, 0, len(funnel), true)
	s.Gates = d.states(&p)
	s.SessionsTouchedSince = p.sessions
	s.Lock = LockStatus{Path: d.lock.Path(), Held: p.holder.Live, PID: p.holder.PID, Reason: p.holder.Reason, Problem: p.lockProblem}
	s.Next = GateReady
	if closed >= 0 {
		s.Next = funnel[closed].name
	}
	s.Sync = <-synced
	return s, nil
}

// Recover finishes what a dead dream left: when the lock names a holder that
// is no longer alive, or a journal is left over, it takes the lock, discards
// the staging or rolls a half-done commit forward, and rewinds the lock to
// its mtime before that dream. It returns what it did, in words; nothing
// when there was nothing to do or a live holder has the lock.
func (d *Dreamer) Recover(ctx context.Context) ([]string, error) {
	holder, err := d.lock.Inspect()
	if err != nil {
		return nil, fmt.Errorf("dream: inspecting the consolidation lock: %w", err)
	}
	deadHolder := holder.Exists && holder.PID > 0 && !holder.Live
	if !deadHolder && !journal.HasPending(d.cfg.StateDir, d.cfg.MemoryDir) {
		return nil, nil
	}
	var did []string
	err = d.locked(ctx, stepOptions{keepRecovering: true, releaseErr: true}, func(_ *lockbackend.Held, rec journal.Recovery) (bool, error) {
		for _, id := range rec.RolledForward {
			did = append(did, "finished the interrupted commit of dream "+id)
		}
		for _, id := range rec.Discarded {
			did = append(did, "discarded the staging of interrupted dream "+id)
		}
		if deadHolder {
			did = append(did, fmt.Sprintf("reclaimed the lock from dead pid %d and reopened the time gate", holder.PID))
		}
		return false, nil
	})
	if errors.Is(err, ErrLockHeld) {
		return nil, nil
	}
	return did, err
}

func (d *Dreamer) throttlePath() string {
	return filepath.Join(d.cfg.StateDir, "throttle", d.memKey)
}

// readThrottle returns the persisted time of the last session scan.
func (d *Dreamer) readThrottle() time.Time {
	b, err := os.ReadFile(d.throttlePath())
	if err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}
	}
	return t
}

func (d *Dreamer) writeThrottle(t time.Time) {
	if err := fsutil.WriteFileAtomic(d.throttlePath(), []byte(t.Format(time.RFC3339Nano)+"\n"), 0o644, true); err != nil {
		d.cfg.Logf("dream: recording the scan time: %v", err)
	}
}
