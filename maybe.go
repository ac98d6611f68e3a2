package dream

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MaybeResult is what the foreground funnel decided.
type MaybeResult struct {
	// Gate is the first closed gate, or GateReady when a dream ran.
	Gate string `json:"gate"`
	// Detail says why, in words.
	Detail string `json:"detail"`
	// Report is the dream's report when one ran.
	Report *Report `json:"report,omitempty"`
}

// Maybe walks the gate funnel in the caller's goroutine, for short-lived
// processes such as `dream maybe` in an agent's stop hook. It stops at the
// first closed gate; when every gate opens it runs a dream in the
// foreground. A closed gate is not an error. ErrLockHeld is returned when
// another live holder took the lock between the gates and the run.
func (d *Dreamer) Maybe(ctx context.Context) (MaybeResult, error) {
	if !d.cfg.Settings.Enabled {
		return MaybeResult{Gate: GateEnabled, Detail: "dreaming is disabled (enabled = false)"}, nil
	}
	d.mu.Lock()
	running := d.running
	d.mu.Unlock()
	if running {
		return MaybeResult{Gate: GateRunning, Detail: "a dream is already running in this process"}, nil
	}
	if _, err := d.Recover(ctx); err != nil {
		d.cfg.Logf("%v", err)
	}
	now := d.cfg.Now()
	last, err := d.lock.LastConsolidatedAt()
	if err != nil {
		return MaybeResult{}, fmt.Errorf("dream: reading the consolidation lock: %w", err)
	}
	d.setLast(last)
	if !d.timeGateOpen(now, last) {
		return MaybeResult{Gate: GateTime, Detail: fmt.Sprintf("%.1fh since the last consolidation, need %gh; opens at %s",
			now.Sub(last).Hours(), d.cfg.Settings.MinHours, last.Add(d.minHours).Format(time.RFC3339))}, nil
	}
	lastScan := d.lastScan
	if d.cfg.PersistThrottle {
		lastScan = d.readThrottle()
	}
	if since := now.Sub(lastScan); since < ScanInterval && !lastScan.After(now) {
		return MaybeResult{Gate: GateThrottle, Detail: fmt.Sprintf("sessions were scanned %s ago; next scan in %s",
			since.Round(time.Second), (ScanInterval - since).Round(time.Second))}, nil
	}
	d.mu.Lock()
	d.lastScan = now
	d.mu.Unlock()
	if d.cfg.PersistThrottle {
		d.writeThrottle(now)
	}
	n, scanErr := d.countSessions(ctx, last)
	if n < d.cfg.Settings.MinSessions {
		detail := fmt.Sprintf("%d session(s) touched since the last consolidation, need %d", n, d.cfg.Settings.MinSessions)
		if scanErr != nil {
			detail += " (" + scanErr.Error() + ")"
		}
		return MaybeResult{Gate: GateSessions, Detail: detail}, nil
	}
	release, err := d.claim()
	if err != nil {
		return MaybeResult{Gate: GateRunning, Detail: err.Error()}, nil
	}
	defer release()
	rep, err := d.run(ctx, runOptions{sessions: n, hoursSince: hoursSince(now, last)})
	if errors.Is(err, ErrLockHeld) {
		return MaybeResult{Gate: GateLock, Detail: err.Error()}, err
	}
	return MaybeResult{Gate: GateReady, Detail: fmt.Sprintf("%d session(s) since the last consolidation", n), Report: &rep}, err
}
