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
	"github.com/dreamkit/dream/internal/lock"
)

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
	Lock                 LockHolder  `json:"lock"`
	Gates                []GateState `json:"gates"`
	Next                 string      `json:"next"`
	Recovered            []string    `json:"recovered,omitempty"`
	Warnings             []string    `json:"warnings,omitempty"`

	// Lock is the lock gate's look at the lock (Inspect: the local file,
	// held too when another machine holds a distributed lock); LockBackend
	// the backend's full picture (Describe: the holder wherever it runs,
	// with the local file beside it).
	LockBackend LockHolder `json:"lock_backend"`
	// Sync compares the memory's history with sync_remote; nil without one.
	Sync *SyncState `json:"sync,omitempty"`
	// LastConsolidatedFrom is set when the lock server could not be asked:
	// LastConsolidatedAt is then this machine's lock file's time.
	LastConsolidatedFrom string `json:"last_consolidated_from,omitempty"`
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
		s.LockBackend = b
	}
	if errors.Is(err, lock.ErrUnreachable) && derr == nil && b.File != nil && b.File.Exists {
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
	s.Lock = p.holder
	s.Lock.Where, s.Lock.Problem = d.lock.Path(), p.lockProblem
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
	deadHolder := holder.Exists && holder.PID > 0 && !holder.Held
	if !deadHolder && !journal.HasPending(d.cfg.StateDir, d.cfg.MemoryDir) {
		return nil, nil
	}
	var did []string
	err = d.locked(ctx, stepOptions{keepRecovering: true, releaseErr: true}, func(_ *held, rec journal.Recovery) (bool, error) {
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
