// Package dream gives an AI coding agent the sleep it needs: while the user
// is away, a restricted sub-agent merges, corrects, dates, prunes and
// re-indexes the agent's long-term memory.
//
// A host agent embeds it by building a Dreamer with New and calling
// MaybeStart from its idle hook after every turn. MaybeStart walks the gate
// funnel cheapest first (enabled flag, in-process running flag, time gate,
// scan throttle, session gate, lock) and returns at once when a gate is
// closed: while the time gate is closed the check makes no system call at
// all. When every gate opens, the dream runs in the background under the
// cross-process consolidation lock, on a staging copy of the memory, and its
// changes land all together or not at all.
package dream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/lockbackend"
	"github.com/dreamkit/dream/internal/settings"
)

// ScanInterval is the scan throttle: at most one session scan per interval.
// The time gate reads the lock mtime, which does not move while the session
// gate stays closed, so without the throttle a host whose time gate is open
// but whose session count stays just short would rescan every turn. A failed
// dream rewinds the lock, so the throttle is also the retry back-off.
const ScanInterval = 10 * time.Minute

// Settings are the tunables of a Dreamer (see internal/settings for the
// keys, defaults and the layered loading used by the command line).
type Settings = settings.Settings

// Errors a caller may test with errors.Is.
var (
	// ErrLockHeld: another live holder has the consolidation lock; nothing
	// was sent to any model.
	ErrLockHeld = errors.New("dream: the consolidation lock is held by another live process")
	// ErrNoRunner: the Config has no Runner.
	ErrNoRunner = errors.New("dream: no runner configured")
	// ErrRunning: a dream is already running in this process.
	ErrRunning = errors.New("dream: a dream is already running in this process")
	// ErrClosed: the Dreamer was closed.
	ErrClosed = errors.New("dream: dreamer closed")
)

// Config is what a host gives New.
type Config struct {
	// MemoryDir is the memory directory to consolidate (required).
	MemoryDir string
	// SessionsDir holds the host's *.jsonl transcripts; empty means none.
	SessionsDir string
	// RepoDir is the code the memory describes; empty means none.
	RepoDir string
	// StateDir keeps tasks, telemetry, journals and the audit history;
	// empty means Settings.StateDir.
	StateDir string
	// CurrentSession returns the id of the session in use, excluded from the
	// session gate; may be nil.
	CurrentSession func() string
	// SessionRule is the host's own rule for what counts as a session;
	// nil means every *.jsonl outside subagents/ directories.
	SessionRule *SessionRule
	// CheckEdit, when set, is asked about each file a dream changed before
	// it lands (rel is slash-separated, relative to MemoryDir; before or
	// after nil for a file added or deleted); a refused file is kept as it
	// was. The command line sets it from the host layout.
	CheckEdit func(rel string, before, after []byte) error
	// Settings are the gate thresholds and budgets. Use DefaultSettings as
	// a base.
	Settings Settings
	// Runner does the work under the lock.
	Runner Runner
	// Provider and Model are recorded in the task entry and audit history.
	Provider, Model string
	// OnProgress receives every event of a running dream; may be nil.
	OnProgress func(taskID string, p Progress)
	// OnDone receives the report of every dream this Dreamer ran, whatever
	// its status; may be nil. It is how a host shows "Improved N memories".
	OnDone func(Report)
	// PersistThrottle keeps the scan throttle in the state dir, so that a
	// short-lived process (a hook running `dream maybe` each turn) is
	// throttled like a long-lived host.
	PersistThrottle bool
	// Logf receives diagnostics of background dreams, which have no caller
	// to return an error to; may be nil.
	Logf func(format string, args ...any)
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time

	// nanobot, set by ConfigForProject for nanobot's flow, finishes every
	// landed dream as nanobot does (FinishNanobotDream).
	nanobot *nanobotFinisher
}

// DefaultSettings returns the built-in defaults for this user's environment.
func DefaultSettings() Settings { return settings.Defaults(nil, "") }

// Dreamer runs dreams for one memory directory.
type Dreamer struct {
	cfg      Config
	lock     lockbackend.Backend
	memKey   string
	minHours time.Duration

	baseCtx context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu       sync.Mutex
	running  bool
	closed   bool
	lastAt   time.Time // cached lock mtime: the last consolidation
	lastScan time.Time
	hook     probe // MaybeStart's probe (see there), guarded by mu

	fast      fastGate // MaybeStart's closed-time-gate flag
	realClock bool     // Config.Now was left nil
}

// New validates cfg and returns a Dreamer. It reads the lock mtime once, so
// that MaybeStart can decide the time gate from memory afterwards.
func New(cfg Config) (*Dreamer, error) {
	if cfg.MemoryDir == "" {
		return nil, errors.New("dream: Config.MemoryDir is required")
	}
	abs, err := filepath.Abs(cfg.MemoryDir)
	if err != nil {
		return nil, fmt.Errorf("dream: memory dir: %w", err)
	}
	cfg.MemoryDir = filepath.Clean(abs)
	for _, p := range []*string{&cfg.SessionsDir, &cfg.RepoDir} {
		if *p != "" {
			if a, err := filepath.Abs(*p); err == nil {
				*p = filepath.Clean(a)
			}
		}
	}
	if cfg.StateDir == "" {
		cfg.StateDir = cfg.Settings.StateDir
	}
	if cfg.StateDir == "" {
		cfg.StateDir = DefaultSettings().StateDir
	}
	if err := checkWritableDirs(cfg); err != nil {
		return nil, err
	}
	// A host that fills Settings by hand gets the defaults for what it left
	// zero: a zero timeout must not mean a dream that may run forever.
	def := DefaultSettings()
	if !(cfg.Settings.MinHours > 0) { // NaN included
		cfg.Settings.MinHours = def.MinHours
	}
	if cfg.Settings.MinSessions <= 0 {
		cfg.Settings.MinSessions = def.MinSessions
	}
	if cfg.Settings.Timeout <= 0 {
		cfg.Settings.Timeout = def.Timeout
	}
	realClock := cfg.Now == nil
	if realClock {
		cfg.Now = time.Now
	}
	if cfg.OnProgress == nil {
		cfg.OnProgress = func(string, Progress) {}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	// The guard's name comes from the resolved path, so that two processes
	// reaching one memory dir through different symlinks share one flock.
	key := MemoryKey(cfg.MemoryDir)
	if resolved, err := filepath.EvalSymlinks(cfg.MemoryDir); err == nil {
		key = MemoryKey(resolved)
	}
	cfg.Settings.SyncBranch = syncBranch(cfg) // fixed once: the memory's name on the remote and in etcd
	lk, err := openLock(cfg, key)
	if err != nil {
		return nil, fmt.Errorf("dream: consolidation lock: %w", err)
	}
	d := &Dreamer{
		cfg:      cfg,
		memKey:   key,
		lock:     lk,
		minHours: gate.HoursDuration(cfg.Settings.MinHours),

		realClock: realClock,
	}
	d.baseCtx, d.cancel = context.WithCancel(context.Background())
	// A host killed mid-dream leaves the lock with the dead dream's fresh
	// mtime; cached as is, it would close the time gate for a day. Like
	// every dream process that looks, finish or forget that dream first.
	if _, err := d.Recover(d.baseCtx); err != nil {
		cfg.Logf("dream: %v", err)
	}
	last, err := d.lock.LastConsolidatedAt()
	if err != nil {
		d.cancel()
		d.lock.Close()
		return nil, fmt.Errorf("dream: reading the consolidation lock: %w", err)
	}
	d.lastAt = last
	d.armGate(last)
	if cfg.PersistThrottle {
		d.lastScan = d.readThrottle()
	}
	return d, nil
}

// MemoryKey is the short stable name of a memory dir inside the state dir.
func MemoryKey(memoryDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(memoryDir)))
	return hex.EncodeToString(sum[:8])
}

// Config returns the Dreamer's effective configuration.
func (d *Dreamer) Config() Config { return d.cfg }

// MaybeStart is the idle hook, the background funnel. It never blocks the
// caller on I/O, never panics, and is safe from many goroutines. It walks
// the cheap gates (enabled, the in-process running flag, the time gate from
// the cached last consolidation time: no system call, the scan throttle) on
// the caller's goroutine, and the costly ones (the session gate, the lock)
// off it; when every gate opens the dream runs in the background.
func (d *Dreamer) MaybeStart() {
	if !d.enabledOpen(nil) { // the enabled gate, before any lock or clock
		return
	}
	if d.fast.closed.Load() { // the time gate, with no lock, clock or syscall
		return
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	// The probe lives in the Dreamer, reused under mu: escape analysis
	// cannot see through the funnel's function values, and a probe on the
	// stack would cost an allocation on every turn.
	p := &d.hook
	*p = probe{ctx: d.baseCtx, now: d.cfg.Now(), last: d.lastAt, lastScan: d.lastScan, running: d.running}
	if d.walk(p, 0, firstCostly, false) >= 0 {
		d.mu.Unlock()
		return
	}
	d.lastScan = p.now
	d.running = true
	d.wg.Add(1)
	walked := *p
	d.mu.Unlock()
	go d.background(walked)
}

// background walks the whole funnel again off the caller's goroutine, with
// the lock's time read afresh (another process may have consolidated) and
// the scan this walk already consumed, then runs the dream if it opens.
func (d *Dreamer) background(p probe) {
	defer d.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			d.cfg.Logf("dream: background run panicked: %v", r)
		}
		d.mu.Lock()
		d.running = false
		d.mu.Unlock()
	}()
	scanAt := p.now
	if d.cfg.PersistThrottle {
		d.writeThrottle(scanAt)
	}
	last, err := d.lock.LastConsolidatedAt()
	if err != nil {
		d.cfg.Logf("dream: %v", err)
		return
	}
	d.setLast(last)
	// The running gate is this dream's own claim, and the throttle was
	// passed by the scan it consumed: both are judged as they were then.
	p.now, p.last, p.running = d.cfg.Now(), last, false
	if d.walk(&p, 0, len(funnel), false) >= 0 {
		return
	}
	_, _ = d.run(d.baseCtx, runOptions{sessions: p.sessions, hoursSince: hoursSince(p.now, last)})
}

// hoursSince is the telemetry's "hours since the last consolidation": 0
// when there was none.
func hoursSince(now, last time.Time) float64 {
	if last.IsZero() {
		return 0
	}
	return now.Sub(last).Hours()
}

func (d *Dreamer) setLast(t time.Time) {
	d.mu.Lock()
	d.lastAt = t
	d.mu.Unlock()
	d.armGate(t)
}

// StartManual runs one dream now in the caller's goroutine: it skips the
// time, throttle and session gates but takes the lock (ErrLockHeld when a
// live holder has it). The report is returned whatever the outcome; err is
// non-nil when the dream did not complete.
func (d *Dreamer) StartManual(ctx context.Context) (Report, error) {
	return d.Run(ctx, RunOptions{})
}

// RunOptions tune a manual run.
type RunOptions struct {
	// Review stops after staging: the changes are kept for `dream apply` or
	// `dream discard` instead of landing in the memory dir.
	Review bool
	// DryRun stops after the checks: the report lists what the dream would
	// change (Changes, FilesTouched), then the staging is dropped and the
	// lock rewound, so neither the memory nor the time gate moves.
	DryRun bool
}

// Run is StartManual with options.
func (d *Dreamer) Run(ctx context.Context, o RunOptions) (Report, error) {
	release, err := d.claim()
	if err != nil {
		return Report{Status: StatusFailed, Error: err.Error()}, err
	}
	defer release()
	last, err := d.lock.LastConsolidatedAt()
	if err != nil {
		return Report{Status: StatusFailed, Error: err.Error()}, err
	}
	n, _ := d.countSessions(ctx, last)
	return d.run(ctx, runOptions{sessions: n, review: o.Review, dryRun: o.DryRun, hoursSince: hoursSince(d.cfg.Now(), last)})
}

// claim sets the in-process running flag for a foreground dream; release
// clears it. It fails with ErrRunning or ErrClosed.
func (d *Dreamer) claim() (release func(), err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if d.running {
		return nil, ErrRunning
	}
	d.running = true
	return func() {
		d.mu.Lock()
		d.running = false
		d.mu.Unlock()
	}, nil
}

// Close stops background dreams (they roll back) and waits for them.
func (d *Dreamer) Close() error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.stopGate()
	d.cancel()
	d.wg.Wait()
	return d.lock.Close()
}

func (d *Dreamer) currentSession() string {
	if d.cfg.CurrentSession == nil {
		return ""
	}
	return d.cfg.CurrentSession()
}
