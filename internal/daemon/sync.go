package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/host"
)

// Results of dream_sync_total.
const (
	syncOK      = "ok"
	syncError   = "error"
	syncSkipped = "skipped_dreaming" // a walk was running on the memory dir
)

// syncSummary is the last interval sync of a memory dir, as /status shows it.
type syncSummary struct {
	At         time.Time `json:"at"`
	Pulled     string    `json:"pulled,omitempty"` // "up to date", "fast-forward", "merge"
	PulledN    int       `json:"pulled_commits"`
	Pushed     int       `json:"pushed_commits"`
	State      string    `json:"state,omitempty"` // "in sync", "ahead", ...
	Error      string    `json:"error,omitempty"`
	DurationMS int64     `json:"duration_ms"`
}

// syncTicker is the interval sync's clock: a nil channel (never ready)
// while syncing is off, so the daemon's select needs no special case.
type syncTicker struct {
	t *time.Ticker
	c <-chan time.Time
}

func (s *syncTicker) reset(every time.Duration) {
	s.stop()
	if every > 0 {
		s.t = time.NewTicker(every)
		s.c = s.t.C
	}
}

func (s *syncTicker) stop() {
	if s.t != nil {
		s.t.Stop()
	}
	s.t, s.c = nil, nil
}

// syncEvery is the interval of the running configuration, 0 when the
// settings name no remote (there is nothing to sync with).
func (d *Daemon) syncEvery() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cfg.Dream.SyncRemote == "" {
		return 0
	}
	return d.cfg.SyncInterval
}

// syncRound starts one pass over every watched memory dir, unless the
// previous pass is still going (a slow remote): a tick is dropped rather
// than queued, so a dir is never synced twice at once and syncs never
// pile up behind a remote that hangs.
func (d *Daemon) syncRound() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing || d.syncBusy || d.cfg.Dream.SyncRemote == "" {
		return
	}
	mems := make([]string, 0, len(d.targets))
	for _, t := range d.sortedTargetsLocked() {
		mems = append(mems, t.project.MemoryDir)
	}
	if len(mems) == 0 {
		return
	}
	d.syncBusy = true
	d.workers.Add(1)
	go d.syncAll(d.cfg, mems)
}

// syncAll syncs the memory dirs one after another: a pass costs a few git
// processes per dir, and running them in turn keeps a machine with many
// projects from opening dozens of connections to one remote at once.
func (d *Daemon) syncAll(cfg Config, mems []string) {
	defer d.workers.Done()
	defer func() {
		d.mu.Lock()
		d.syncBusy = false
		d.mu.Unlock()
	}()
	for _, mem := range mems {
		d.mu.Lock()
		if d.closing {
			d.mu.Unlock()
			return
		}
		t := d.targets[mem]
		if t == nil || t.removed {
			d.mu.Unlock()
			continue
		}
		if t.state == stateRunning {
			// The walk's own dream pulls before and pushes after; this
			// dir is synced again at the next tick anyway.
			d.m.syncs.WithLabelValues(syncSkipped).Inc()
			d.log.Debug("sync skipped: a dream is running", "memory_dir", mem)
			d.mu.Unlock()
			continue
		}
		t.syncing = true
		p, sessions := t.project, t.active
		d.mu.Unlock()

		sum := d.syncOne(cfg, p, sessions)

		d.mu.Lock()
		t.syncing = false
		t.lastSync = &sum
		if t.removed && t.state != stateRunning && d.targets[mem] == t {
			delete(d.targets, mem)
		}
		d.startQueuedLocked() // a walk that waited for this sync
		d.mu.Unlock()
	}
}

// syncOne is `dream sync` on one memory dir: record hand edits, pull,
// push, under the consolidation lock, through the public API.
func (d *Daemon) syncOne(cfg Config, p host.Project, sessions string) syncSummary {
	start := time.Now()
	sum := syncSummary{At: start}
	dr, err := d.dreamer(cfg, p, sessions)
	var rep dream.SyncReport
	if err == nil {
		rep, err = dr.Sync(d.dreamCtx, dream.SyncOptions{})
		dr.Close()
	}
	sum.DurationMS = time.Since(start).Milliseconds()
	sum.Pulled, sum.PulledN, sum.Pushed, sum.State = rep.Pulled.Kind, rep.Pulled.Commits, rep.Pushed, rep.State.State
	attrs := []any{"memory_dir", p.MemoryDir, "remote", cfg.Dream.SyncRemote, "duration_ms", sum.DurationMS}
	if err != nil {
		if errors.Is(context.Cause(d.dreamCtx), dream.ErrKilled) {
			return sum // shutting down: not a failure of the remote
		}
		sum.Error = err.Error()
		d.m.syncs.WithLabelValues(syncError).Inc()
		d.log.Warn("sync failed", append(attrs, "error", sum.Error)...)
		return sum
	}
	d.m.syncs.WithLabelValues(syncOK).Inc()
	d.m.syncCommits.WithLabelValues("pulled").Add(float64(sum.PulledN))
	d.m.syncCommits.WithLabelValues("pushed").Add(float64(sum.Pushed))
	d.log.Info("synced", append(attrs, "pulled", sum.Pulled, "pulled_commits", sum.PulledN,
		"pushed_commits", sum.Pushed, "state", sum.State)...)
	return sum
}
