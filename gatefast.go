package dream

import (
	"sync"
	"sync/atomic"
	"time"
)

// gateRecheck is the longest the closed-gate flag trusts the monotonic
// clock: timers do not advance while a laptop sleeps, so the flag is
// re-derived from the wall clock at least this often.
const gateRecheck = time.Minute

// fastGate lets MaybeStart answer "time gate closed" with one atomic load:
// no mutex, no clock read, no allocation, no system call. The flag is set
// whenever the cached last-consolidation time closes the gate, and a timer
// clears it (re-deriving it from the clock) when the gate opens or at the
// latest after gateRecheck.
type fastGate struct {
	closed atomic.Bool
	mu     sync.Mutex
	timer  *time.Timer
	off    bool // after Close
}

// armGate sets the flag from last and schedules its re-check. It is only
// used with the real clock: a host or test that drives Config.Now decides
// each call on the slow path.
func (d *Dreamer) armGate(last time.Time) {
	if !d.realClock {
		return
	}
	g := &d.fast
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off {
		g.closed.Store(false)
		return
	}
	now := time.Now()
	closed := !d.timeGateOpen(now, last)
	g.closed.Store(closed)
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if !closed {
		return
	}
	wait := gateRecheck
	if until := last.Add(d.minHours).Sub(now); until > 0 && until < wait {
		wait = until
	}
	g.timer = time.AfterFunc(wait, func() {
		d.mu.Lock()
		last := d.lastAt
		d.mu.Unlock()
		d.armGate(last)
	})
}

// stopGate clears the flag for good and stops its timer.
func (d *Dreamer) stopGate() {
	g := &d.fast
	g.mu.Lock()
	defer g.mu.Unlock()
	g.off = true
	g.closed.Store(false)
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}
