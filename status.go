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
	"github.com/dreamkit/dream/internal/gitsync"
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
	LockBackend lockbackend.Status `json:"lock_backend"`
	// Sync compares the memory's history with sync_remote; nil without one.
	Sync *gitsync.State `json:"sync,omitempty"`
}

// Status evaluates every gate without starting a dream. It re-reads the lock
// mtime (a hand edit may have moved it back) and, like every dream process
// that looks, recovers a dream whose holder died: its staging is discarded
// or its half-done commit rolled forward, and the lock mtime rewound so the
// time gate reopens.
func (d *Dreamer) Status(ctx context.Context) (StatusReport, error) {
	s := StatusReport{
		Enabled:     d.cfg.Settings.Enabled,
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
	now := d.cfg.Now()
	last, err := d.lock.LastConsolidatedAt()
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("reading the consolidation lock: %v", err))
	}
	d.setLast(last)
	if !last.IsZero() {
		l := last
		h := now.Sub(last).Hours()
		s.LastConsolidatedAt, s.HoursSinceLast = &l, &h
	}
	if b, err := d.lock.Describe(ctx); err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	} else {
		s.LockBackend = b
	}
	s.Sync = d.syncStatus(ctx)

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
	if err := fsutil.WriteFileAtomic(d.throttlePath(), []byte(t.Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		d.cfg.Logf("dream: recording the scan time: %v", err)
	}
}
