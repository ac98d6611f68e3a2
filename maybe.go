package dream

import (
	"context"
	"errors"
	"fmt"

	"github.com/dreamkit/dream/internal/lock"
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

// MaybeRun is the foreground funnel, for short-lived processes such as
// `dream maybe` in an agent's stop hook: it walks the same gates as
// MaybeStart in the caller's goroutine, stops at the first closed one and,
// when every gate opens, runs a dream before it returns. A closed gate is
// not an error, except the lock: a live holder comes back as a
// *LockHeldError (errors.Is(err, ErrLockHeld)), found by the lock gate or by
// the acquisition if the holder arrived after it.
func (d *Dreamer) MaybeRun(ctx context.Context) (MaybeResult, error) {
	d.mu.Lock()
	p := probe{ctx: ctx, now: d.cfg.Now(), loadLast: true, lastScan: d.lastScan, running: d.running}
	d.mu.Unlock()
	if d.cfg.PersistThrottle {
		p.lastScan = d.readThrottle()
	}
	if res, done, err := d.closedAt(&p, d.walk(&p, 0, firstCostly, false)); done {
		return res, err
	}
	d.mu.Lock()
	d.lastScan = p.now
	d.mu.Unlock()
	if d.cfg.PersistThrottle {
		d.writeThrottle(p.now)
	}
	if res, done, err := d.closedAt(&p, d.walk(&p, firstCostly, len(funnel), false)); done {
		return res, err
	}
	release, err := d.claim()
	if err != nil {
		return MaybeResult{Gate: GateRunning, Detail: err.Error()}, nil
	}
	defer release()
	rep, err := d.run(ctx, runOptions{sessions: p.sessions, hoursSince: hoursSince(p.now, p.last), last: p.last})
	if errors.Is(err, ErrLockHeld) {
		return MaybeResult{Gate: GateLock, Detail: err.Error()}, err
	}
	if rep.Status == StatusNotStarted {
		// A ceiling the estimate does not fit under is a closed gate: it
		// reopens with the next day, month or setting.
		return MaybeResult{Gate: GateBudget, Detail: rep.Error}, nil
	}
	return MaybeResult{Gate: GateReady, Detail: fmt.Sprintf("%d session(s) since the last consolidation", p.sessions), Report: &rep}, err
}

// closedAt turns a walk's first closed gate (i >= 0) into MaybeRun's
// answer; done is false when every gate walked was open.
func (d *Dreamer) closedAt(p *probe, i int) (res MaybeResult, done bool, err error) {
	if i < 0 {
		return MaybeResult{}, false, nil
	}
	if p.lastErr != nil {
		return MaybeResult{}, true, fmt.Errorf("dream: reading the consolidation lock: %w", p.lastErr)
	}
	g := funnel[i]
	res = MaybeResult{Gate: g.name, Detail: g.detail(d, p, false)}
	if g.name == GateLock {
		if p.lockProblem != "" {
			err = fmt.Errorf("dream: the consolidation lock is unusable: %s", p.lockProblem)
		} else {
			err = d.lockHeld(p.ctx, fmt.Errorf("%w: %s", lock.ErrHeld, p.holder.Reason))
		}
	}
	return res, true, err
}
