package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/dreamkit/dream/internal/daemon"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/settings"
)

// daemonFlags are the flags of `dream daemon` and its subcommands.
type daemonFlags struct {
	file          string
	idle          time.Duration
	maxConcurrent int
	listen        string
	noDetect      bool
	verbose       bool
	// install
	remove bool
	kind   string
	dryRun bool
}

func cmdDaemon(a *app, args []string) error {
	var df daemonFlags
	fs, raw := a.newFlags("daemon")
	fs.StringVar(&df.file, "daemon-file", "", "the daemon's file, a `PATH` (default: daemon.toml beside the user's config.toml)")
	fs.DurationVar(&df.idle, "idle", 0, "how long a memory dir's sessions must be quiet before its gate funnel is walked (default 10m)")
	fs.IntVar(&df.maxConcurrent, "max-concurrent", 0, "most dreams at once on this machine (default 1)")
	fs.StringVar(&df.listen, "listen", "", "serve /metrics and /status on this loopback `ADDRESS`, e.g. 127.0.0.1:9464 (default: off)")
	fs.BoolVar(&df.noDetect, "no-detect", false, "watch only the projects in the daemon file, not every project the agents' layouts show")
	fs.BoolVar(&df.verbose, "verbose", false, "log at debug level")
	fs.BoolVar(&df.remove, "remove", false, "install: take the service out")
	fs.StringVar(&df.kind, "kind", "", "install: the service `KIND`, systemd or launchd (default: by the operating system)")
	fs.BoolVar(&df.dryRun, "dry-run", false, "install: print the service file instead of writing it")
	pos, err := a.parse(fs, raw, args)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(a.stdout, "daemon", fs)
		return nil
	}
	if err != nil {
		return err
	}
	flags := visitedSettingFlags(fs, raw)
	if df.file == "" {
		df.file = a.daemonFile()
	}
	if df.idle < 0 || df.maxConcurrent < 0 {
		return usagef("--idle and --max-concurrent must be positive")
	}
	sub := ""
	if len(pos) > 0 {
		sub = pos[0]
	}
	switch sub {
	case "":
		return a.runDaemon(df, flags)
	case "add":
		if len(pos) != 2 {
			return usagef("daemon add takes one project directory: dream daemon add PATH [--host NAME | --memory-dir DIR --sessions-dir DIR]")
		}
		return a.daemonAdd(df, flags, pos[1])
	case "install":
		if len(pos) != 1 {
			return usagef("daemon install takes no arguments; got %q", pos[1])
		}
		return a.daemonInstall(df)
	}
	return unknownWord("daemon subcommand", sub, []string{"install", "add"}, "dream daemon [install [--remove] | add PATH]")
}

// visitedSettingFlags is the settings flags given on the command line, keyed
// as the settings package wants them, so that a reload re-applies them.
func visitedSettingFlags(fs *flag.FlagSet, raw map[string]*string) map[string]string {
	flags := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if p, ok := raw[f.Name]; ok {
			flags[strings.ReplaceAll(f.Name, "-", "_")] = *p
		}
	})
	return flags
}

// daemonFile is daemon.toml beside the user's config.toml.
func (a *app) daemonFile() string {
	user := settings.UserFile(a.env, a.home())
	if user == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(user), "daemon.toml")
}

// runDaemon runs the daemon in the foreground until a.ctx ends, reloading
// its configuration on SIGHUP.
func (a *app) runDaemon(df daemonFlags, flags map[string]string) error {
	level := slog.LevelInfo
	if df.verbose {
		level = slog.LevelDebug
	}
	log := daemon.NewLogger(a.stderr, isTerminal(a.stderr), level)
	first := true
	load := func() (daemon.Config, error) {
		// The first load is the parse's; every reload re-reads the files.
		if !first {
			if err := a.loadSettings(flags); err != nil {
				return daemon.Config{}, err
			}
		}
		first = false
		return a.daemonConfig(df, flags, log)
	}
	reload, stop := a.reloadOnHUP()
	defer stop()
	d, err := daemon.New(daemon.Options{Load: load, Reload: reload, Logger: log})
	if err != nil {
		if errors.Is(err, daemon.ErrNotLoopback) {
			return usagef("%v", err)
		}
		return err
	}
	if err := d.Run(a.ctx); err != nil {
		log.Error("daemon", "error", err.Error())
		return reported(exitFailed, err)
	}
	return nil
}

// daemonConfig builds the daemon's configuration from daemon.toml, the
// flags that override it and the settings loaded last: the daemon calls it
// at start and on every reload, so both read the files the same way.
func (a *app) daemonConfig(df daemonFlags, flags map[string]string, log *slog.Logger) (daemon.Config, error) {
	ds, err := daemon.ReadFile(df.file)
	if err != nil {
		return daemon.Config{}, err
	}
	if df.idle > 0 {
		ds.Idle = df.idle
	}
	if df.maxConcurrent > 0 {
		ds.MaxConcurrent = df.maxConcurrent
	}
	if df.listen != "" {
		ds.Listen = df.listen
	}
	if df.noDetect {
		ds.Detect = false
	}
	s := a.loaded.Settings
	// Locations given on the command line are one more project.
	if s.MemoryDir != "" || (s.Host != "" && flags["host"] != "") {
		mem, sessions, repo, err := a.locations()
		if err != nil {
			return daemon.Config{}, err
		}
		e := daemon.ProjectEntry{MemoryDir: absPath(mem), SessionsDir: absPath(sessions), Path: absPath(repo), Host: s.Host}
		ds.Projects = append(ds.Projects, e)
	}
	choice, err := a.chooseProvider()
	if err != nil {
		return daemon.Config{}, usagef("%v", err)
	}
	if choice.Name == provider.Offline {
		for _, u := range choice.Unused {
			log.Info("a model key is set but not spent", "key", u.Var, "enable", u.Enable)
		}
	}
	return daemon.Config{
		Settings: ds,
		Dream:    s.Dream,
		StateDir: s.StateDir,
		Home:     a.home(),
		Env:      a.env,
		Backend:  choice,
		Jobs:     jobsOf(a.loaded.Jobs, s, a.home(), a.env),
	}, nil
}

// reloadOnHUP turns each SIGHUP into a reload request for the daemon,
// until a.ctx ends; stop stops listening for the signal.
func (a *app) reloadOnHUP() (reload <-chan struct{}, stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ch := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				select {
				case ch <- struct{}{}:
				case <-a.ctx.Done():
					return
				}
			case <-a.ctx.Done():
				return
			}
		}
	}()
	return ch, func() { signal.Stop(hup) }
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// daemonAdd records a project in the daemon file. With --host (or
// --memory-dir) it is taken as given; otherwise every per-project agent
// layout that has transcripts for PATH is added.
func (a *app) daemonAdd(df daemonFlags, flags map[string]string, path string) error {
	if df.file == "" {
		return usagef("no daemon file: set HOME or XDG_CONFIG_HOME, or pass --daemon-file")
	}
	repo := absPath(path)
	if fi, err := os.Stat(repo); err != nil || !fi.IsDir() {
		return usagef("daemon add: %s is not a directory", path)
	}
	var entries []daemon.ProjectEntry
	hostName, mem, sessions := flags["host"], flags["memory_dir"], flags["sessions_dir"]
	switch {
	case mem != "":
		entries = append(entries, daemon.ProjectEntry{Path: repo, Host: hostName, MemoryDir: absPath(mem), SessionsDir: absPath(sessions)})
	case hostName != "":
		if _, err := host.ResolveProject(hostName, repo, a.home(), a.env); err != nil {
			return usagef("%v", err)
		}
		entries = append(entries, daemon.ProjectEntry{Path: repo, Host: hostName, SessionsDir: absPath(sessions)})
	default:
		for _, h := range []string{"claude", "gemini", "codebot"} {
			p, err := host.ResolveProject(h, repo, a.home(), a.env)
			if err != nil {
				continue
			}
			if fi, err := os.Stat(p.SessionsDir); err == nil && fi.IsDir() {
				entries = append(entries, daemon.ProjectEntry{Path: repo, Host: h})
			}
		}
		if len(entries) == 0 {
			return usagef("daemon add: no agent has transcripts for %s yet; pass --host NAME (%s) or --memory-dir and --sessions-dir", repo, strings.Join(host.Names(), ", "))
		}
	}
	var out []map[string]any
	for _, e := range entries {
		added, err := daemon.AddProject(df.file, e)
		if err != nil {
			return err
		}
		out = append(out, map[string]any{"path": e.Path, "host": e.Host, "memory_dir": e.MemoryDir, "sessions_dir": e.SessionsDir, "added": added, "file": df.file})
		if a.jsonOut {
			continue
		}
		what := e.Path
		if e.Host != "" {
			what += " (" + e.Host + ")"
		}
		if added {
			fmt.Fprintf(a.stdout, "added %s to %s\n", what, df.file)
		} else {
			fmt.Fprintf(a.stdout, "%s is already in %s\n", what, df.file)
		}
	}
	if a.jsonOut {
		a.printJSON(out)
		return nil
	}
	fmt.Fprintln(a.stdout, "a running daemon picks it up on SIGHUP (systemctl --user reload dream, or kill -HUP its pid) or at its next rescan")
	return nil
}

func (a *app) daemonInstall(df daemonFlags) error {
	kind := df.kind
	if kind == "" {
		kind = daemon.KindSystemd
		if runtime.GOOS == "darwin" {
			kind = daemon.KindLaunchd
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("daemon install: locating the dream binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	u, err := daemon.UnitFor(kind, exe, a.home(), settings.ConfigHome(a.lookupEnv, a.home()))
	if err != nil {
		return usagef("%v", err)
	}
	view := map[string]any{"kind": kind, "path": u.Path, "dry_run": df.dryRun, "remove": df.remove, "enable": u.Enable, "disable": u.Disable}
	if df.dryRun {
		if a.jsonOut {
			view["content"] = u.Content
			a.printJSON(view)
			return nil
		}
		fmt.Fprintf(a.stdout, "# %s\n%s", u.Path, u.Content)
		return nil
	}
	if df.remove {
		removed, err := daemon.Remove(u)
		if err != nil {
			return err
		}
		if a.jsonOut {
			view["changed"] = removed
			a.printJSON(view)
			return nil
		}
		if !removed {
			fmt.Fprintf(a.stdout, "no %s service installed at %s; nothing to remove\n", kind, u.Path)
			return nil
		}
		fmt.Fprintf(a.stdout, "removed %s\nif it is running, stop it with:\n", u.Path)
		for _, c := range u.Disable {
			fmt.Fprintf(a.stdout, "  %s\n", c)
		}
		return nil
	}
	changed, err := daemon.Install(u)
	if err != nil {
		return err
	}
	if a.jsonOut {
		view["changed"] = changed
		a.printJSON(view)
		return nil
	}
	if changed {
		fmt.Fprintf(a.stdout, "wrote %s\n", u.Path)
	} else {
		fmt.Fprintf(a.stdout, "%s is already up to date\n", u.Path)
	}
	fmt.Fprintln(a.stdout, "start it now and at every login with:")
	for _, c := range u.Enable {
		fmt.Fprintf(a.stdout, "  %s\n", c)
	}
	if kind == daemon.KindSystemd {
		fmt.Fprintln(a.stdout, "provider keys (ANTHROPIC_API_KEY=...) go in ~/.config/dream/daemon.env, one per line, with the provider that spends them (DREAM_PROVIDER=anthropic): a service's environment is not consent")
	}
	return nil
}
