package dream

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/lock"
)

// Gate names, in funnel order. StatusReport.Next is one of them or "ready".
const (
	GateEnabled  = "enabled"
	GateRunning  = "running"
	GateTime     = "time"
	GateThrottle = "throttle"
	GateSessions = "sessions"
	// GateFiles and GateCommits are a job's (JobSpec.Watch, MinCommits):
	// open, and not shown, when the job does not set them.
	GateFiles   = "files"
	GateCommits = "commits"
	GateLock    = "lock"
	GateReady   = "ready"
)

// GateState is one gate of the funnel: whether it is open, and why.
type GateState struct {
	Name   string `json:"name"`
	Open   bool   `json:"open"`
	Detail string `json:"detail"`
}

// gate is one step of the funnel. open decides from a probe without
// formatting anything (MaybeStart asks on every turn); detail puts the
// decision in words, for Status and the foreground funnel only.
type funnelGate struct {
	name string
	// costly gates do I/O: MaybeStart asks them off the caller's goroutine,
	// after the cheap ones passed and the scan throttle was consumed.
	costly bool
	// set says whether the Dreamer has the gate at all (nil: always): a
	// gate it does not have is open, asks nothing and is not shown.
	set    func(d *Dreamer) bool
	open   func(d *Dreamer, p *probe) bool
	detail func(d *Dreamer, p *probe, open bool) string
}

// funnel is the gate funnel, cheapest first. It is the one definition the
// background idle hook (MaybeStart), the foreground funnel (MaybeRun) and
// Status all walk, so adding a gate is adding an entry here. The cheap
// gates come first and the throttle last among them: passing every cheap
// gate is what consumes the throttle, before the session scan.
var funnel = [...]funnelGate{
	{name: GateEnabled, open: (*Dreamer).enabledOpen, detail: (*Dreamer).enabledDetail},
	{name: GateRunning, open: (*Dreamer).runningOpen, detail: (*Dreamer).runningDetail},
	{name: GateTime, open: (*Dreamer).timeOpen, detail: (*Dreamer).timeDetail},
	{name: GateThrottle, open: (*Dreamer).throttleOpen, detail: (*Dreamer).throttleDetail},
	{name: GateFiles, costly: true, set: func(d *Dreamer) bool { return len(d.cfg.Job.Watch) > 0 }, open: (*Dreamer).filesOpen, detail: (*Dreamer).filesDetail},
	{name: GateSessions, costly: true, set: func(d *Dreamer) bool { return d.cfg.Settings.MinSessions > 0 }, open: (*Dreamer).sessionsOpen, detail: (*Dreamer).sessionsDetail},
	{name: GateCommits, costly: true, set: func(d *Dreamer) bool { return d.cfg.Job.MinCommits > 0 }, open: (*Dreamer).commitsOpen, detail: (*Dreamer).commitsDetail},
	{name: GateLock, costly: true, open: (*Dreamer).lockOpen, detail: (*Dreamer).lockDetail},
}

// probe is one walk's view of what the gates decide on. The cheap inputs
// are set by whoever walks; the costly ones are read by their gate, once.
type probe struct {
	ctx      context.Context
	now      time.Time
	running  bool      // another dream runs in this process
	lastScan time.Time // the last session scan (the throttle)

	// last is the last consolidation time. When loadLast is set the time
	// gate first reads it from the lock, recovering a dead dream first
	// (the foreground funnel, which must not do that I/O for a closed
	// enabled or running gate); lastErr is that read's failure.
	last     time.Time
	loadLast bool
	lastErr  error

	sessions int // the session gate's count
	scanErr  error

	holder      LockHolder // the lock gate's look at the lock
	lockProblem string

	changed  string // the file gate's first changed file
	filesErr error
	commits  int // the commit gate's count
	gitErr   error

	open   uint32 // bit i: funnel[i] is open
	walked int    // funnel[:walked] were evaluated
}

// walk evaluates funnel[from:to] in order and returns the index of the
// first closed gate, or -1. all evaluates every gate even past a closed one
// (Status shows each); otherwise the walk stops at the first closed gate.
func (d *Dreamer) walk(p *probe, from, to int, all bool) int {
	closed := -1
	for i := from; i < to; i++ {
		g := &funnel[i]
		open := g.set != nil && !g.set(d) || g.open(d, p)
		if open {
			p.open |= 1 << i
		} else {
			p.open &^= 1 << i
		}
		p.walked = i + 1
		if !open && closed < 0 {
			closed = i
			if !all {
				break
			}
		}
	}
	return closed
}

// firstCostly is where MaybeStart leaves the caller's goroutine.
var firstCostly = func() int {
	for i, g := range funnel {
		if g.costly {
			return i
		}
	}
	return len(funnel)
}()

// states puts every evaluated gate in words.
func (d *Dreamer) states(p *probe) []GateState {
	out := make([]GateState, 0, p.walked)
	for i := 0; i < p.walked; i++ {
		if g := funnel[i]; g.set != nil && !g.set(d) {
			continue
		}
		open := p.open&(1<<i) != 0
		out = append(out, GateState{Name: funnel[i].name, Open: open, Detail: funnel[i].detail(d, p, open)})
	}
	return out
}

func (d *Dreamer) enabledOpen(*probe) bool { return d.cfg.Settings.Enabled && d.cfg.agentOwns == "" }

func (d *Dreamer) enabledDetail(_ *probe, open bool) string {
	switch {
	case open:
		return "enabled"
	case !d.cfg.Job.IsMemory():
		return "the job is off: enabled = true in its [[job]] turns it on (`dream run --job " + d.cfg.Job.Name + "` runs it by hand)"
	case d.cfg.agentOwns != "":
		return d.cfg.agentOwns
	}
	return "dreaming is disabled (enabled = false)"
}

func (d *Dreamer) runningOpen(p *probe) bool { return !p.running }

func (d *Dreamer) runningDetail(_ *probe, open bool) string {
	if open {
		return "no dream running in this process"
	}
	return "a dream is already running in this process"
}

func (d *Dreamer) timeOpen(p *probe) bool {
	if p.loadLast {
		p.loadLast = false
		if _, err := d.Recover(p.ctx); err != nil {
			d.cfg.Logf("%v", err)
		}
		p.last, p.lastErr = d.lock.LastConsolidatedAt()
		if p.lastErr != nil {
			return false
		}
		d.setLast(p.last)
	}
	return d.timeGateOpen(p.now, p.last)
}

// timeGateOpen reports whether enough time has passed since last. A last
// time in the future is clock skew: the gate opens rather than stay closed
// until the clock catches up.
func (d *Dreamer) timeGateOpen(now, last time.Time) bool {
	if last.IsZero() || clockSkewed(now, last) {
		return true
	}
	return now.Sub(last) >= d.minHours
}

// clockSkewed: last is further in the future than the lock's own
// tolerance, so it is skew, not a consolidation that just happened.
func clockSkewed(now, last time.Time) bool { return last.After(now.Add(lock.FutureSkew)) }

func (d *Dreamer) timeDetail(p *probe, open bool) string {
	switch {
	case p.lastErr != nil:
		return fmt.Sprintf("reading the consolidation lock: %v", p.lastErr)
	case p.last.IsZero():
		return "never consolidated"
	case clockSkewed(p.now, p.last):
		return fmt.Sprintf("last consolidation %s is in the future (clock skew): treated as open", p.last.Format(time.RFC3339))
	}
	detail := fmt.Sprintf("%.1fh since the last consolidation, need %gh", p.now.Sub(p.last).Hours(), d.cfg.Settings.MinHours)
	if !open {
		detail += fmt.Sprintf("; opens at %s", p.last.Add(d.minHours).Format(time.RFC3339))
	}
	return detail
}

// throttleOpen: at most one session scan per ScanInterval. A scan time in
// the future (clock skew, a hand edit) does not hold the gate shut.
func (d *Dreamer) throttleOpen(p *probe) bool {
	return p.now.Sub(p.lastScan) >= ScanInterval || p.lastScan.After(p.now)
}

func (d *Dreamer) throttleDetail(p *probe, open bool) string {
	if open {
		return fmt.Sprintf("no session scan in the last %s", ScanInterval)
	}
	since := p.now.Sub(p.lastScan)
	return fmt.Sprintf("sessions were scanned %s ago; next scan in %s", since.Round(time.Second), (ScanInterval - since).Round(time.Second))
}

func (d *Dreamer) sessionsOpen(p *probe) bool {
	p.sessions, p.scanErr = d.countSessions(p.ctx, p.last)
	return p.sessions >= d.cfg.Settings.MinSessions
}

func (d *Dreamer) sessionsDetail(p *probe, _ bool) string {
	detail := fmt.Sprintf("%d session(s) touched since the last consolidation, need %d", p.sessions, d.cfg.Settings.MinSessions)
	if d.cfg.SessionsDir == "" {
		detail = "no sessions dir configured: " + detail
	}
	if p.scanErr != nil {
		detail += " (" + p.scanErr.Error() + ")"
	}
	return detail
}

func (d *Dreamer) filesOpen(p *probe) bool {
	p.changed, p.filesErr = gate.ChangedSince(p.ctx, d.cfg.RepoDir, d.cfg.Job.Watch, p.last)
	return p.changed != ""
}

func (d *Dreamer) filesDetail(p *probe, open bool) string {
	switch {
	case p.filesErr != nil:
		return p.filesErr.Error()
	case open:
		return p.changed + " changed since the last run"
	}
	return "none of " + strings.Join(d.cfg.Job.Watch, ", ") + " changed since the last run"
}

func (d *Dreamer) commitsOpen(p *probe) bool {
	p.commits, p.gitErr = gate.CommitsSince(p.ctx, d.cfg.RepoDir, p.last)
	return p.gitErr == nil && p.commits >= d.cfg.Job.MinCommits
}

func (d *Dreamer) commitsDetail(p *probe, _ bool) string {
	if p.gitErr != nil {
		return p.gitErr.Error()
	}
	return fmt.Sprintf("%d commit(s) since the last run, need %d", p.commits, d.cfg.Job.MinCommits)
}

// lockOpen looks at the lock without taking it; acquiring it is still the
// authority (a holder may arrive between this look and the dream).
func (d *Dreamer) lockOpen(p *probe) bool {
	p.holder, p.lockProblem = d.inspectForStatus()
	return p.lockProblem == "" && !p.holder.Held
}

func (d *Dreamer) lockDetail(p *probe, _ bool) string {
	switch {
	case p.lockProblem != "":
		return "unusable: " + p.lockProblem
	case p.holder.Held:
		return fmt.Sprintf("held by pid %d: %s", p.holder.PID, p.holder.Reason)
	}
	return "free: " + p.holder.Reason
}
