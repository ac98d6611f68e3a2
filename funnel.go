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
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
)

// Gate names, in funnel order. StatusReport.Next is one of them or "ready".
const (
	GateEnabled  = "enabled"
	GateRunning  = "running"
	GateTime     = "time"
	GateThrottle = "throttle"
	GateSessions = "sessions"
	// GateFiles and GateCommits are a job's (jobs.Spec.Watch, MinCommits):
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

func (d *Dreamer) enabledOpen(*probe) bool { return d.cfg.Settings.Enabled && d.cfg.Disabled == "" }

func (d *Dreamer) enabledDetail(_ *probe, open bool) string {
	switch {
	case open:
		return "enabled"
	case !d.cfg.Job.IsMemory():
		return "the job is off: enabled = true in its [[job]] turns it on (`dream run --job " + d.cfg.Job.Name + "` runs it by hand)"
	case d.cfg.Disabled != "":
		return d.cfg.Disabled
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

// StatusReport says why a dream would or would not start now.
type StatusReport struct {
	// Job names the job (jobs.Spec); empty for the memory dream, and then
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
