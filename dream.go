// Package dream gives an AI coding agent the sleep it needs: while the user
// is away, a restricted sub-agent merges, corrects, dates, prunes and
// re-indexes the agent's long-term memory.
//
// A host agent embeds it by building a Dreamer with New and calling
// MaybeStart from its idle hook after every turn (MaybeRun is the same
// funnel in the foreground, for short-lived processes; Run skips the
// gates). MaybeStart walks the gate funnel cheapest first (enabled flag, in-process running flag, time gate,
// scan throttle, session gate, lock) and returns at once when a gate is
// closed: while the time gate is closed the check makes no system call at
// all. When every gate opens, the dream runs in the background under the
// cross-process consolidation lock, on a staging copy of the memory, and its
// changes land all together or not at all.
package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/settings"
)

// ScanInterval is the scan throttle: at most one session scan per interval.
// The time gate reads the lock mtime, which does not move while the session
// gate stays closed, so without the throttle a host whose time gate is open
// but whose session count stays just short would rescan every turn. A failed
// dream rewinds the lock, so the throttle is also the retry back-off.
const ScanInterval = 10 * time.Minute

// Config is what a host gives New.
type Config struct {
	// MemoryDir is the memory directory to consolidate (required).
	MemoryDir string
	// SessionsDir holds the host's *.jsonl transcripts; empty means none.
	SessionsDir string
	// RepoDir is the code the memory describes; empty means none.
	RepoDir string
	// Host names the agent whose memory it is ("claude", "codex", ...),
	// recorded with what its dreams spend; empty for none.
	Host string
	// StateDir keeps tasks, telemetry, journals and the audit history;
	// empty means $XDG_STATE_HOME/dream, else ~/.local/state/dream (New
	// fails when neither is known).
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
	// Settings are the gate thresholds, budgets and policies, the lock
	// and sync remote, the spending ceilings: settings.DreamDefaults() is
	// the base, and settings.Load reads them from the user's layered
	// configuration as the command line does. A zero threshold or budget
	// a host left unset gets its default.
	Settings settings.Dream
	// Runner does the work under the lock.
	Runner Runner
	// Provider and Model are recorded in the task entry and audit history;
	// the Runner is what actually talks to them. ProviderWhy says why that
	// provider (a setting, a key given to dream, offline because a key
	// was only inherited), for the task entry and the telemetry.
	Provider, Model, ProviderWhy string
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
	// Job makes the Dreamer run one background job among several (the
	// Dreamer pattern, seed 002 §21.7); the zero Spec is the memory dream.
	// A job's dreams write MemoryDir (its write dir) and nothing else, and
	// keep their journal, audit history, scan throttle and lock under
	// <StateDir>/jobs/<Name>, so that two jobs never recover or record
	// each other's work; tasks and telemetry stay shared. Its gates and
	// budgets are Settings (MinSessions 0 leaves the session gate open); a
	// job never syncs and always takes the file lock.
	Job jobs.Spec
	// OpenLock builds the consolidation lock Settings.Lock names when it is
	// not the file lock (etcd), wrapping file, which it must take too; the
	// library does not link those backends: the dream command wires them.
	// cfg is the resolved Config (Settings.SyncBranch is the memory's name).
	OpenLock func(cfg Config, file Lock) (Lock, error)
	// OpenSync opens the memory's history on Settings.SyncRemote (set by
	// the dream command to the git backend); fence is what the Syncer
	// calls right before a pull lands files, to prove the lock is still
	// held. Unused without a sync remote.
	OpenSync func(ctx context.Context, cfg Config, fence func(context.Context) error) (Syncer, error)

	// Disabled, when set, says why the memory is not dream's to
	// consolidate (the agent consolidates it itself, as Codex's memories
	// feature does unless codex_memory_owner hands it to dream): the
	// enabled gate stays closed with this reason and Run refuses.
	Disabled string
	// AfterLand, when set, runs after every completed dream and every
	// applied review, once the lock is released (nanobot's flow commits
	// the change to nanobot's own git store and compacts its history).
	// ctx keeps the caller's values; an error is logged, what landed
	// stays.
	AfterLand func(ctx context.Context, memoryDir string) error

	// sharedState is the state dir the task registry and the telemetry
	// are in, shared by every job: StateDir itself for the memory dream,
	// and the StateDir a job's was resolved from (see jobs.Spec).
	sharedState string
}

// Dreamer runs dreams for one memory directory.
type Dreamer struct {
	cfg      Config
	lock     Lock
	memKey   string
	rule     *gate.Rule // Config.SessionRule, converted once
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
}

// New validates cfg and returns a Dreamer. It reads the lock mtime once, so
// that MaybeStart can decide the time gate from memory afterwards.
func New(cfg Config) (*Dreamer, error) {
	cfg, err := resolveConfig(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// The guard's name comes from the resolved path, so that two processes
	// reaching one memory dir through different symlinks share one flock.
	key := MemoryKey(cfg.MemoryDir)
	lk, err := openLock(cfg, key)
	if err != nil {
		return nil, fmt.Errorf("dream: consolidation lock: %w", err)
	}
	d := &Dreamer{
		cfg:      cfg,
		memKey:   key,
		rule:     cfg.SessionRule.gateRule(),
		lock:     lk,
		minHours: gate.HoursDuration(cfg.Settings.MinHours),
	}
	d.baseCtx, d.cancel = context.WithCancel(context.Background())
	// A host killed mid-dream leaves the lock with the dead dream's fresh
	// mtime; cached as is, it would close the time gate for a day. Like
	// every dream process that looks, finish or forget that dream first.
	if _, err := d.Recover(d.baseCtx); err != nil {
		cfg.Logf("dream: %v", err)
	}
	last, err := d.lock.LastConsolidatedAt()
	if errors.Is(err, lock.ErrUnreachable) {
		// A lock server cut off is no reason not to build the Dreamer:
		// Status shows what is known locally, and every gate that needs the
		// server reads it again (and says it cannot).
		cfg.Logf("dream: %v", err)
		last, err = time.Time{}, nil
	}
	if err != nil {
		d.cancel()
		d.lock.Close()
		return nil, fmt.Errorf("dream: reading the consolidation lock: %w", err)
	}
	d.lastAt = last
	if cfg.PersistThrottle {
		d.lastScan = d.readThrottle()
	}
	return d, nil
}

// resolveConfig checks cfg and fills what New may fill: absolute paths,
// the state dir, the defaults of settings a host left zero, no-op hooks.
// Config is the one home of where a Dreamer works and who dreams
// (MemoryDir, SessionsDir, RepoDir, StateDir, Provider, Model).
func resolveConfig(cfg Config) (Config, error) {
	if cfg.MemoryDir == "" {
		return cfg, errors.New("dream: Config.MemoryDir is required")
	}
	abs, err := filepath.Abs(cfg.MemoryDir)
	if err != nil {
		return cfg, fmt.Errorf("dream: memory dir: %w", err)
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
		home, _ := os.UserHomeDir()
		cfg.StateDir = settings.StateDir(os.LookupEnv, home)
	}
	if cfg.StateDir == "" {
		return cfg, errNoStateDir
	}
	if a, err := filepath.Abs(cfg.StateDir); err == nil {
		cfg.StateDir = filepath.Clean(a)
	}
	if err := checkWritableDirs(cfg); err != nil {
		return cfg, err
	}
	if err := resolveJob(&cfg); err != nil {
		return cfg, err
	}
	s := &cfg.Settings
	if s.SyncRemote != "" && cfg.OpenSync == nil {
		return cfg, errors.New("dream: sync_remote is set, but git sync is not linked into this program (Config.OpenSync is nil; the dream command wires it)")
	}
	s.FillZeros(cfg.Job.IsMemory())
	if cfg.OnProgress == nil {
		cfg.OnProgress = func(string, Progress) {}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	s.SyncBranch = syncBranch(cfg) // fixed once: the memory's name on the remote and in etcd
	return cfg, nil
}

// resolveJob moves a job's records into its own part of the state dir
// (once: a Config a Dreamer returns resolves to itself) and keeps it to the
// scope it may write.
func resolveJob(cfg *Config) error {
	if !cfg.Job.IsMemory() {
		if err := jobs.CheckName(cfg.Job.Name); err != nil {
			return fmt.Errorf("dream: job %w", err)
		}
	}
	if cfg.sharedState == "" {
		cfg.sharedState = cfg.StateDir
		cfg.StateDir = jobs.StateDir(cfg.StateDir, cfg.Job.Name)
	}
	if cfg.Job.IsMemory() {
		return nil
	}
	if err := jobs.CheckScope(cfg.Job, cfg.MemoryDir, cfg.RepoDir); err != nil {
		return fmt.Errorf("dream: job %s: %w", cfg.Job.Name, err)
	}
	// A job's history is its own: no sync remote, no etcd keys.
	cfg.Settings.SyncRemote, cfg.Settings.Lock = "", settings.LockFile
	inScope := jobs.WriteScope(cfg.Job.Files)
	inner := cfg.CheckEdit
	cfg.CheckEdit = func(rel string, before, after []byte) error {
		if !inScope(rel) {
			return fmt.Errorf("%s is outside job %s's write scope (%s)", rel, cfg.Job.Name, strings.Join(cfg.Job.Files, ", "))
		}
		if inner != nil {
			return inner(rel, before, after)
		}
		return nil
	}
	return nil
}

// MemoryKey is the short stable name of a memory dir inside the state dir:
// a hash of its absolute, clean, symlink-resolved path, so that every
// spelling of one directory shares one lock guard, throttle, journal and
// audit history. It is the journal's key (one definition for all of them);
// "" only when the path cannot be made absolute.
func MemoryKey(memoryDir string) string {
	key, _ := journal.MemKey(memoryDir)
	return key
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
	_, _ = d.run(d.baseCtx, runOptions{sessions: p.sessions, hoursSince: hoursSince(p.now, last), last: last})
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

// Run runs one dream now in the caller's goroutine, as `dream run` does: it
// skips the time, throttle and session gates but takes the lock (a
// *LockHeldError, errors.Is(err, ErrLockHeld), when a live holder has it).
// The report is returned whatever the outcome; err is non-nil when the
// dream did not complete.
func (d *Dreamer) Run(ctx context.Context, o RunOptions) (Report, error) {
	if d.cfg.Disabled != "" {
		err := errors.New("dream: " + d.cfg.Disabled)
		return Report{Status: StatusFailed, Error: err.Error()}, err
	}
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
	return d.run(ctx, runOptions{sessions: n, review: o.Review, dryRun: o.DryRun, hoursSince: hoursSince(d.cfg.Now(), last), last: last})
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

// SessionRule says which transcripts a host agent itself counts as
// sessions and how it names the current one (see Config.SessionRule). The
// command line fills it from the agent's layout; an embedding host may
// build its own. Every field may be nil.
type SessionRule struct {
	// Match reports whether the regular file name, depth directories below
	// the sessions root (0: directly in it), is a session, and returns the
	// session id it carries in the form Same compares. Nil means any
	// *.jsonl, with the whole stem as id.
	Match func(depth int, name string) (id string, ok bool)
	// Descend reports whether the directory name, depth directories below
	// the root, is entered. Nil means every directory but "subagents".
	Descend func(depth int, name string) bool
	// Keep, when set, is asked about a file that Match accepted and that
	// was modified since the last consolidation: it gets the file's first
	// line (a few KiB at most) and decides from the agent's own metadata.
	Keep func(firstLine []byte) bool
	// Alias, when set, names the file that supersedes name in the same
	// directory: a file whose alias exists is not counted.
	Alias func(name string) string
	// Same reports whether the session with id is the current one, given
	// the id the agent hands its hooks. Nil means the generic suffix match.
	Same func(id, current string) bool
}

// gateRule converts the rule for the session scan; nil stays nil.
func (r *SessionRule) gateRule() *gate.Rule {
	if r == nil {
		return nil
	}
	return &gate.Rule{Match: r.Match, Descend: r.Descend, Keep: r.Keep, Alias: r.Alias, Same: r.Same}
}
