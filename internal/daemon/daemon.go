// Package daemon is `dream daemon`: one long-lived process that watches the
// transcript directories of every project it is told about or detects, and
// walks a memory dir's gate funnel once that memory dir's sessions have been
// quiet for an idle window. It is built only on the public API of package
// dream, like any other host: the Dreamer owns the gates, the lock, the
// journal and the audit; the daemon only decides when to ask.
//
// Wake-ups come from the kernel (fsnotify: inotify, kqueue, ...), never
// from a polling loop. A fallback rescan, at most every few minutes, picks
// up what a dropped event or a file system without notifications missed,
// and notices projects that appeared or disappeared.
//
// At most MaxConcurrent dreams run at a time on the machine and never two
// on one memory dir; the consolidation lock excludes other processes too.
// When the context ends (SIGTERM, SIGINT) running dreams are cancelled with
// dream.ErrKilled, so they roll back and are recorded as killed, and Run
// returns within a few seconds.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/etcdlock"
	"github.com/dreamkit/dream/internal/gitsync"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/settings"
)

// Config is everything one generation of the daemon runs with; Load
// returns a fresh one at start and on every reload (SIGHUP).
type Config struct {
	Settings
	// Dream is the dream settings every memory dir's Dreamer gets.
	Dream settings.Dream
	// StateDir holds tasks, telemetry, journals and the audit history.
	StateDir string
	// Home and Env locate the agents' layouts (Env: os.LookupEnv).
	Home string
	Env  func(string) (string, bool)
	// Backend makes each project's runner for the project's host
	// (hostcfg.For): the command line passes its
	// provider.Choice, whose runner.For gives nanobot's history dream on a
	// nanobot workspace.
	Backend hostcfg.Backend
	// Runner, when set, does every dream instead (tests); Provider and
	// Model, when set, are recorded instead of Backend's.
	Runner          dream.Runner
	Provider, Model string
	// Jobs, when set, returns the jobs of a project's repository: after
	// each walk of its memory dream's funnel, each enabled job's funnel is
	// walked too, cheapest gate first, in the same slot; each job's lock
	// keeps two runs of one job on one scope apart.
	Jobs func(repo string) []jobs.Job
}

// Options are what Run needs besides the context.
type Options struct {
	// Load returns the configuration; it is called at start and on every
	// value received from Reload. A failed reload keeps the old one.
	Load func() (Config, error)
	// Reload delivers SIGHUP; may be nil.
	Reload <-chan struct{}
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// ShutdownGrace bounds how long Run waits for killed dreams to roll
	// back before it returns anyway; 0 means 10 s.
	ShutdownGrace time.Duration
	// OnListen, if set, receives the address the HTTP listener bound.
	OnListen func(addr string)
	// OnScanned, if set, is called after each rescan (tests wait on it).
	OnScanned func()
}

// Target states.
const (
	stateIdle    = "idle"    // nothing happened since the last funnel walk
	stateWaiting = "waiting" // sessions active; waiting for the idle window
	stateQueued  = "queued"  // idle; waiting for a dream slot
	stateRunning = "running" // the funnel (and maybe a dream) is running
)

// rootOwner marks a watched directory that is a discovery root (where
// agents create new project dirs) rather than part of a target.
const rootOwner = "\x00root"

// rescanDebounce is how long a burst of structural changes (a project dir
// created or removed) is let settle before the rescan they call for.
const rescanDebounce = 2 * time.Second

// target is one memory dir and the transcript dirs whose activity wakes it.
type target struct {
	project  host.Project
	sessions []string // every sessions dir feeding this memory dir
	active   string   // the sessions dir of the latest activity

	state     string
	lastEvent time.Time
	timer     *time.Timer
	dirty     bool      // activity while queued or running
	seenMtime time.Time // newest transcript mtime a rescan saw
	removed   bool      // gone from the config; drop once its run ends

	walks      int
	lastWalk   time.Time
	lastGate   string
	lastDetail string
	lastDream  *dreamSummary
	taskID     string // of the running dream, once it has reported
	runStart   time.Time

	// syncing is set while the interval sync runs on this memory dir; a
	// queued walk waits for it, as a sync waits for a running walk.
	syncing  bool
	lastSync *syncSummary
}

type dreamSummary struct {
	TaskID     string    `json:"task_id"`
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	Files      []string  `json:"files_touched"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
}

// Daemon is one running daemon. Build it with New, then Run it.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	m       *metrics
	started time.Time

	mu         sync.Mutex
	cfg        Config
	targets    map[string]*target // by memory dir
	watched    map[string]string  // watched dir -> memory dir, or rootOwner
	queue      []string
	running    int
	closing    bool
	lastRescan time.Time
	httpAddr   string
	watchErrs  int
	syncBusy   bool // a sync round is under way

	w          *fsnotify.Watcher
	dreamCtx   context.Context
	killDreams context.CancelCauseFunc
	workers    sync.WaitGroup
	rescanNow  chan struct{}
	rescanT    *time.Timer

	httpSrv *http.Server
	httpLn  net.Listener
}

// New loads the configuration once, so that a bad one is reported before
// anything is watched.
func New(opts Options) (*Daemon, error) {
	if opts.Load == nil {
		return nil, errors.New("daemon: Options.Load is required")
	}
	cfg, err := opts.Load()
	if err != nil {
		return nil, err
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 10 * time.Second
	}
	d := &Daemon{
		opts:      opts,
		log:       log,
		m:         newMetrics(cfg.StateDir),
		cfg:       cfg,
		targets:   map[string]*target{},
		watched:   map[string]string{},
		rescanNow: make(chan struct{}, 1),
	}
	return d, nil
}

func (c Config) check() error {
	if c.StateDir == "" {
		return errors.New("daemon: no state dir")
	}
	if c.Runner == nil && c.Backend == nil {
		return errors.New("daemon: no runner and no provider choice")
	}
	if c.Listen != "" {
		if _, err := loopbackAddr(c.Listen); err != nil {
			return err
		}
	}
	return nil
}

// Run watches until ctx ends, then kills running dreams (they roll back)
// and returns. The error is nil on a clean shutdown.
func (d *Daemon) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("daemon: starting the file watcher: %w", err)
	}
	d.w = w
	defer w.Close()
	d.dreamCtx, d.killDreams = context.WithCancelCause(context.WithoutCancel(ctx))
	defer d.killDreams(nil)

	d.mu.Lock()
	d.started = time.Now()
	cfg := d.cfg
	d.mu.Unlock()
	for _, warn := range cfg.Warnings {
		d.log.Warn("daemon config", "warning", warn)
	}
	if err := d.setListener(cfg.Listen); err != nil {
		return err
	}
	defer d.stopHTTP()
	d.log.Info("daemon started", "pid", os.Getpid(), "idle", cfg.Idle.String(), "max_concurrent", cfg.MaxConcurrent,
		"rescan", cfg.Rescan.String(), "detect", cfg.Detect, "listen", d.httpAddr, "sync_interval", d.syncEvery().String())

	d.rescan()
	ticker := time.NewTicker(cfg.Rescan)
	defer ticker.Stop()
	var syncs syncTicker
	defer syncs.stop()
	syncs.reset(d.syncEvery())
	for {
		select {
		case <-ctx.Done():
			return d.shutdown()
		case ev, ok := <-w.Events:
			if !ok {
				return d.shutdown()
			}
			d.onEvent(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return d.shutdown()
			}
			d.log.Warn("file watcher", "error", err.Error())
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				d.scheduleRescan() // events were lost: look again
			}
		case <-ticker.C:
			d.rescan()
		case <-syncs.c:
			d.syncRound()
		case <-d.rescanNow:
			d.rescan()
		case _, ok := <-d.opts.Reload:
			if !ok {
				d.opts.Reload = nil
				continue
			}
			if d.reload() {
				d.mu.Lock()
				ticker.Reset(d.cfg.Rescan)
				d.mu.Unlock()
				syncs.reset(d.syncEvery())
			}
		}
	}
}

// reload re-reads the configuration; a bad one keeps the running one.
func (d *Daemon) reload() bool {
	cfg, err := d.opts.Load()
	if err == nil {
		err = cfg.check()
	}
	if err != nil {
		d.log.Error("reload failed; keeping the running configuration", "error", err.Error())
		return false
	}
	for _, warn := range cfg.Warnings {
		d.log.Warn("daemon config", "warning", warn)
	}
	d.mu.Lock()
	oldListen := d.cfg.Listen
	d.cfg = cfg
	d.mu.Unlock()
	if cfg.Listen != oldListen {
		d.stopHTTP()
		if err := d.setListener(cfg.Listen); err != nil {
			d.log.Error("reload: the HTTP listener", "error", err.Error())
		}
	}
	d.log.Info("configuration reloaded", "idle", cfg.Idle.String(), "max_concurrent", cfg.MaxConcurrent, "projects", len(cfg.Projects), "detect", cfg.Detect)
	d.rescan()
	d.mu.Lock()
	d.startQueuedLocked()
	d.mu.Unlock()
	return true
}

// shutdown kills running dreams and waits, within the grace, for them to
// roll back.
func (d *Daemon) shutdown() error {
	d.mu.Lock()
	d.closing = true
	for _, t := range d.targets {
		if t.timer != nil {
			t.timer.Stop()
			t.timer = nil
		}
	}
	n := d.running
	if d.rescanT != nil {
		d.rescanT.Stop()
	}
	d.mu.Unlock()
	d.log.Info("shutting down", "running_dreams", n)
	d.killDreams(dream.ErrKilled)
	done := make(chan struct{})
	go func() { d.workers.Wait(); close(done) }()
	select {
	case <-done:
		d.log.Info("stopped")
		return nil
	case <-time.After(d.opts.ShutdownGrace):
		return fmt.Errorf("daemon: %d dream(s) had not rolled back after %s; the next process that looks recovers them", n, d.opts.ShutdownGrace)
	}
}

// onEvent maps a file-system event to the memory dir it wakes.
func (d *Daemon) onEvent(ev fsnotify.Event) {
	d.m.events.Inc()
	name := filepath.Clean(ev.Name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if owner, ok := d.watched[name]; ok {
			// A watched dir went away (a project deleted, a date dir
			// pruned): the kernel dropped the watch; forget it, and let a
			// rescan decide whether its memory dir is still watched.
			delete(d.watched, name)
			_ = d.w.Remove(name)
			d.m.watches.Set(float64(len(d.watched)))
			if owner != rootOwner {
				d.scheduleRescanLocked()
			}
		}
	}
	owner, ok := d.watched[filepath.Dir(name)]
	if !ok || d.closing {
		return
	}
	if owner == rootOwner {
		if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			d.scheduleRescanLocked() // a project dir appeared or went
		}
		return
	}
	t := d.targets[owner]
	if t == nil || within(name, t.project.MemoryDir) {
		return // the memory dir's own files are not session activity
	}
	root := ""
	for _, s := range t.sessions {
		if within(name, s) {
			root = s
			break
		}
	}
	if root == "" {
		return
	}
	t.active = root
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
			rel, _ := filepath.Rel(root, name)
			d.watchTreeLocked(name, owner, strings.Count(rel, string(filepath.Separator))+1)
		}
	}
	d.touchLocked(t, time.Now())
}

// touchLocked records activity at 'at' and arms the idle timer. One timer
// per memory dir, re-armed only when it fires, so an event storm costs a
// map lookup and a clock read per event, not a timer reset.
func (d *Daemon) touchLocked(t *target, at time.Time) {
	if at.After(t.lastEvent) {
		t.lastEvent = at
	}
	switch t.state {
	case stateQueued, stateRunning:
		t.dirty = true
		return
	}
	t.state = stateWaiting
	if t.timer == nil {
		wait := d.cfg.Idle - time.Since(t.lastEvent)
		mem := t.project.MemoryDir
		t.timer = time.AfterFunc(max(wait, 0), func() { d.idleFired(mem) })
	}
}

// idleFired runs on the timer's goroutine.
func (d *Daemon) idleFired(mem string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.targets[mem]
	if t == nil || d.closing {
		return
	}
	t.timer = nil
	if t.state != stateWaiting {
		return
	}
	if rem := d.cfg.Idle - time.Since(t.lastEvent); rem > 0 {
		t.timer = time.AfterFunc(rem, func() { d.idleFired(mem) })
		return
	}
	t.state = stateQueued
	d.queue = append(d.queue, mem)
	d.startQueuedLocked()
}

// retry queues a memory dir whose walk met the scan throttle.
func (d *Daemon) retry(mem string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.targets[mem]
	if t == nil || d.closing || t.state != stateWaiting {
		return
	}
	t.timer = nil
	t.state = stateQueued
	d.queue = append(d.queue, mem)
	d.startQueuedLocked()
}

// startQueuedLocked starts funnel walks while there are free slots. A
// memory dir being synced keeps its place in the queue; the sync's end
// calls this again.
func (d *Daemon) startQueuedLocked() {
	var waiting []string
	defer func() { d.queue = append(waiting, d.queue...) }()
	for !d.closing && d.running < d.cfg.MaxConcurrent && len(d.queue) > 0 {
		mem := d.queue[0]
		d.queue = d.queue[1:]
		t := d.targets[mem]
		if t == nil || t.state != stateQueued {
			continue
		}
		if t.syncing {
			waiting = append(waiting, mem)
			continue
		}
		t.state = stateRunning
		t.dirty = false
		t.runStart = time.Now()
		t.taskID = ""
		d.running++
		d.m.running.Set(float64(d.running))
		d.workers.Add(1)
		go d.walk(d.cfg, t.project, t.active)
	}
}

// walk is one funnel walk for a memory dir, in its own goroutine.
func (d *Daemon) walk(cfg Config, p host.Project, sessions string) {
	defer d.workers.Done()
	res, err := d.funnel(cfg, p, sessions)
	d.walkJobs(cfg, p, sessions)
	label := hostLabel(p.Host)
	d.m.observe(label, res)
	attrs := []any{"memory_dir", p.MemoryDir, "host", label, "gate", res.Gate}
	switch {
	case res.Report != nil:
		r := res.Report
		attrs = append(attrs, "task_id", r.TaskID, "status", r.Status, "files_touched", len(r.FilesTouched),
			"input_tokens", r.Usage.InputTokens, "output_tokens", r.Usage.OutputTokens, "duration_ms", r.DurationMS)
		if r.Error != "" {
			attrs = append(attrs, "error", r.Error)
		}
		d.log.Info("dream finished", attrs...)
	case err != nil:
		d.log.Warn("gate funnel failed", append(attrs, "error", err.Error())...)
	default:
		d.log.Info("gate closed", append(attrs, "detail", res.Detail)...)
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	d.running--
	d.m.running.Set(float64(d.running))
	if t := d.targets[p.MemoryDir]; t != nil {
		t.walks++
		t.lastWalk = time.Now()
		t.lastGate, t.lastDetail = res.Gate, res.Detail
		if err != nil && res.Detail == "" {
			t.lastDetail = err.Error()
		}
		if r := res.Report; r != nil {
			t.lastDream = &dreamSummary{TaskID: r.TaskID, Status: r.Status, Error: r.Error, Files: r.FilesTouched, StartedAt: r.StartedAt, DurationMS: r.DurationMS}
		}
		t.taskID = ""
		t.state = stateIdle
		if t.removed {
			delete(d.targets, p.MemoryDir)
		} else if t.dirty && !d.closing {
			// Sessions were active during the walk: wait for them to go
			// quiet again. The funnel decides whether that means a dream.
			t.dirty = false
			d.touchLocked(t, t.lastEvent)
		} else if res.Gate == dream.GateThrottle && !d.closing {
			// Another process (a hook's `dream maybe`) scanned the
			// sessions a moment ago: ask once more when the throttle
			// has reopened, rather than wait for the next activity.
			t.state = stateWaiting
			mem := p.MemoryDir
			t.timer = time.AfterFunc(dream.ScanInterval, func() { d.retry(mem) })
		}
	}
	d.startQueuedLocked()
}

// walkJobs walks the funnel of each enabled job of p's repository, one
// after the other, with p's memory and transcripts for their read scopes
// and session gates. Their outcomes count under host="job:NAME".
func (d *Daemon) walkJobs(cfg Config, p host.Project, sessions string) {
	if cfg.Jobs == nil || p.RepoDir == "" {
		return
	}
	project := p
	project.SessionsDir = sessions
	for _, j := range cfg.Jobs(p.RepoDir) {
		if j.IsMemory() || !j.Settings.Enabled {
			continue
		}
		res, err := d.jobFunnel(cfg, project, j)
		d.m.observe("job:"+j.Name, res)
		attrs := []any{"job", j.Name, "dir", j.Dir, "gate", res.Gate, "detail", res.Detail}
		if r := res.Report; r != nil {
			attrs = append(attrs, "task_id", r.TaskID, "status", r.Status, "files_touched", len(r.FilesTouched))
		}
		if err != nil {
			d.log.Warn("job funnel failed", append(attrs, "error", err.Error())...)
			continue
		}
		d.log.Info("job funnel walked", attrs...)
	}
}

func (d *Daemon) jobFunnel(cfg Config, p host.Project, j jobs.Job) (dream.MaybeResult, error) {
	dcfg, err := hostcfg.For(p, cfg.Backend, dream.Config{
		StateDir: cfg.StateDir, Settings: j.Settings.Dream, Job: j.Spec, PersistThrottle: true,
		Logf: func(format string, args ...any) { d.log.Warn(fmt.Sprintf(format, args...), "job", j.Name) },
	}, cfg.Home, cfg.Env)
	if err != nil {
		return dream.MaybeResult{}, err
	}
	dr, err := dream.New(dcfg)
	if err != nil {
		return dream.MaybeResult{}, err
	}
	defer dr.Close()
	return dr.MaybeRun(d.dreamCtx)
}

// funnel asks the memory dir's gate funnel, through the public API: a
// Dreamer per walk, so that settings reloaded on SIGHUP apply to the next
// walk and nothing is cached across projects. The scan throttle is
// persisted in the state dir, shared with `dream maybe` run from hooks.
func (d *Daemon) funnel(cfg Config, p host.Project, sessions string) (dream.MaybeResult, error) {
	if fi, err := os.Stat(p.MemoryDir); err != nil || !fi.IsDir() {
		return dream.MaybeResult{Gate: "memory_dir", Detail: "the memory dir is gone"}, fmt.Errorf("memory dir %s: not a directory", p.MemoryDir)
	}
	dr, err := d.dreamer(cfg, p, sessions)
	if err != nil {
		return dream.MaybeResult{}, err
	}
	defer dr.Close()
	res, err := dr.MaybeRun(d.dreamCtx)
	if res.Report != nil {
		d.log.Debug("dream report", "task_id", res.Report.TaskID)
	}
	return res, err
}

// dreamer is the one place a memory dir's Dreamer is built, for funnel
// walks and interval syncs alike. The host's edit guard, session rule,
// runner and nanobot's flow come from the one constructor the command line
// and the MCP server use.
func (d *Daemon) dreamer(cfg Config, p host.Project, sessions string) (*dream.Dreamer, error) {
	project := p
	project.SessionsDir = sessions
	dcfg, err := hostcfg.For(project, cfg.Backend, dream.Config{
		StateDir:        cfg.StateDir,
		Settings:        cfg.Dream,
		Runner:          cfg.Runner,
		Provider:        cfg.Provider,
		Model:           cfg.Model,
		PersistThrottle: true,
		OpenLock:        etcdlock.Open,
		OpenSync:        gitsync.Open,
		OnProgress: func(id string, _ dream.Progress) {
			d.mu.Lock()
			if t := d.targets[p.MemoryDir]; t != nil && t.taskID == "" {
				t.taskID = id
			}
			d.mu.Unlock()
		},
		Logf: func(format string, args ...any) {
			d.log.Warn(fmt.Sprintf(format, args...), "memory_dir", p.MemoryDir)
		},
	}, cfg.Home, cfg.Env)
	if err != nil {
		return nil, err
	}
	return dream.New(dcfg)
}

func hostLabel(h string) string {
	if h == "" {
		return "custom"
	}
	return h
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "" {
		return false
	}
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func (d *Daemon) scheduleRescan() {
	d.mu.Lock()
	d.scheduleRescanLocked()
	d.mu.Unlock()
}

// scheduleRescanLocked asks for a rescan after rescanDebounce, once per
// burst.
func (d *Daemon) scheduleRescanLocked() {
	if d.rescanT != nil || d.closing {
		return
	}
	d.rescanT = time.AfterFunc(rescanDebounce, func() {
		d.mu.Lock()
		d.rescanT = nil
		d.mu.Unlock()
		select {
		case d.rescanNow <- struct{}{}:
		default:
		}
	})
}

// sortedTargets returns the memory dirs in order, for stable output.
func (d *Daemon) sortedTargetsLocked() []*target {
	out := make([]*target, 0, len(d.targets))
	for _, t := range d.targets {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].project.MemoryDir < out[j].project.MemoryDir })
	return out
}
