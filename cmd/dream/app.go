package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
	"github.com/dreamkit/dream/internal/etcdlock"
	"github.com/dreamkit/dream/internal/gitsync"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/settings"
)

// app is one invocation of the command line.
type app struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	env    func(string) (string, bool)
	// cmd is the command's name, for messages that point at its help.
	cmd string
	// askedJSON: --json is among the arguments, even when the flags
	// failed to parse before it, so that the error is JSON too.
	askedJSON bool

	// Filled by flags.
	session string
	jsonOut bool
	hook    bool
	// job is --job: the job the command is about ("" or "memory": the
	// memory dream); jobsWarned says the jobs' config problems were said.
	job        string
	jobsWarned bool

	loaded settings.Loaded
	// projectFile is the .dream.toml loadSettings looked for (it may not
	// exist): `dream trust` with no path trusts it.
	projectFile string
	// layout is the host layout locations resolved or detected, if any.
	layout *host.Layout
	// hintStateDir, when set, is the state dir the commands printed for a
	// user to paste must name (see hint).
	hintStateDir string
}

func (a *app) getenv(k string) string {
	if a.env == nil {
		return ""
	}
	v, _ := a.env(k)
	return v
}

// parse parses args allowing flags before and after positional arguments
// (`dream undo ID --memory-dir M`), and loads the settings.
func (a *app) parse(fs *flag.FlagSet, raw map[string]*string, args []string) ([]string, error) {
	if err := missingValue(fs, strings.TrimPrefix(fs.Name(), "dream "), args); err != nil {
		return nil, err
	}
	pos, flags, err := cmdline.Parse(fs, raw, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, flagError(fs, strings.TrimPrefix(fs.Name(), "dream "), err)
	}
	if a.hook {
		if err := a.readHookPayload(flags); err != nil {
			return nil, err
		}
	}
	return pos, a.loadSettings(flags)
}

// newFlags is cmdline.New bound to this invocation's --session, --hook
// and --json.
func (a *app) newFlags(name string) (*flag.FlagSet, map[string]*string) {
	fs, raw := cmdline.New(name, &a.session, &a.hook, &a.jsonOut)
	if jobCommands[name] {
		fs.StringVar(&a.job, "job", "", "the job `NAME` whose dreams this is about (default: the memory dream; dream jobs lists them)")
	}
	return fs, raw
}

// readHookPayload takes the current session and the working directory from
// the JSON an agent passes its hooks on stdin (cmdline.HookPayload).
func (a *app) readHookPayload(flags map[string]string) error {
	if a.stdin == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, cmdline.HookPayloadLimit))
	if err != nil {
		return usagef("--hook: reading stdin: %v", err)
	}
	if err := cmdline.HookPayload(b, &a.session, flags); err != nil {
		return usagef("--hook: stdin is not a hook's JSON payload: %v", err)
	}
	return nil
}

func (a *app) home() string { return cmdline.Home(a.lookupEnv) }

// lookupEnv is a.env, or an empty environment when there is none.
func (a *app) lookupEnv(k string) (string, bool) {
	if a.env == nil {
		return "", false
	}
	return a.env(k)
}

// loadSettings layers defaults, the user file, the project file, DREAM_*
// and the flags (cmdline.LoadSettings); warnings go to stderr.
func (a *app) loadSettings(flags map[string]string) error {
	l, err := cmdline.LoadSettings(a.lookupEnv, flags)
	a.projectFile = l.ProjectFile
	if err != nil {
		return settingsError(a.cmd, err)
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(a.stderr, "dream: warning: %s\n", w)
	}
	a.loaded = l.Loaded
	return nil
}

// locations resolves the memory, sessions and repo dirs from the flags and
// the host layout.
func (a *app) locations() (mem, sessions, repo string, err error) {
	s := a.loaded.Settings
	mem, sessions, repo = s.MemoryDir, s.SessionsDir, s.Repo
	l, err := a.resolveLayout(s.Host, mem, repo)
	if err != nil {
		return "", "", "", err
	}
	fromFlag := mem != ""
	if l != nil {
		if mem == "" {
			mem = l.MemoryDir
		}
		if sessions == "" {
			sessions = l.SessionsDir
		}
		if a.session == "" {
			a.session = host.CurrentSession(l.Host, a.env)
		}
		repo = a.layoutRepo(l, repo)
	}
	if mem != "" && a.isNanobot() {
		mem = a.nanobotWorkspace(mem, fromFlag)
	}
	if mem == "" {
		return "", "", "", usagef("no memory directory: pass --memory-dir DIR or --host NAME (claude, codex, gemini, nanobot, codebot, dir), or set memory_dir in the config file")
	}
	return mem, sessions, repo, nil
}

// dreamer builds the Dreamer for this invocation. The runner is chosen from
// the provider settings unless the caller sets one.
func (a *app) dreamer(runner dream.Runner, backend hostcfg.Backend, onProgress func(string, dream.Progress)) (*dream.Dreamer, error) {
	if a.isJob() {
		return a.jobDreamer(runner, backend, onProgress)
	}
	mem, sessions, repo, err := a.locations()
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(mem); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, usagef("memory directory %s: %v", mem, err)
	}
	cfg, err := a.hostConfig(mem, sessions, repo, backend, dream.Config{
		StateDir:        a.loaded.Settings.StateDir,
		Settings:        a.loaded.Settings.Dream,
		Runner:          runner,
		PersistThrottle: true,
		OnProgress:      onProgress,
		OpenLock:        etcdlock.Open,
		OpenSync:        gitsync.Open,
		Logf: func(format string, args ...any) {
			fmt.Fprintf(a.stderr, format+"\n", args...)
		},
	})
	if err != nil {
		return nil, err
	}
	return a.newDreamer(cfg)
}

// newDreamer is dream.New for a Config hostcfg.For built: a model-free
// Dreamer (history, sync, apply) records the provider and model the
// user's settings name, as its dreams' records always did.
func (a *app) newDreamer(cfg dream.Config) (*dream.Dreamer, error) {
	if cfg.Provider == "" && cfg.Model == "" {
		cfg.Provider, cfg.Model = a.loaded.Settings.Provider, a.loaded.Settings.Model
	}
	return dream.New(cfg)
}

// hostConfig fits base to the host of this invocation (edit guard, session
// rule, runner, nanobot's flow) through hostcfg.For, the one
// constructor the daemon and the MCP server share.
func (a *app) hostConfig(mem, sessions, repo string, backend hostcfg.Backend, base dream.Config) (dream.Config, error) {
	p := host.Project{Host: a.loaded.Settings.Host, MemoryDir: mem, SessionsDir: sessions, RepoDir: repo}
	if a.layout != nil {
		p.Host = a.layout.Host
	} else if p.Host == "" && a.isNanobot() {
		p.Host = nanobot.HostName
	}
	session := a.session
	base.CurrentSession = func() string { return session }
	cfg, err := hostcfg.For(p, backend, base, a.home(), a.env)
	if err != nil {
		return dream.Config{}, usagef("%v", err)
	}
	return cfg, nil
}

// printJSON writes v as indented JSON on stdout.
func (a *app) printJSON(v any) { writeJSON(a.stdout, a.stderr, v) }

// isTerminal reports whether w is a terminal. Being a character device is
// not enough: /dev/null is one, and a hook or a cron line that sends the
// output there must get plain lines, not a live line redrawn for every
// file a dream writes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// standardCommand handles the parse step every command shares: --help
// prints the command's flags and returns flag.ErrHelp (exit 0), a parse
// error is a usage error.
func (a *app) standardCommand(name string, args []string, extra func(fs *flag.FlagSet)) ([]string, error) {
	fs, raw := a.newFlags(name)
	if extra != nil {
		extra(fs)
	}
	pos, err := a.parse(fs, raw, args)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(a.stdout, name, fs)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if c, _ := commandByName(name); c.args == "" && len(pos) > 0 {
		return nil, usagef("%s takes no arguments; got %q (see dream help %s)", name, pos[0], name)
	}
	return pos, nil
}
