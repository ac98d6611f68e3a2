package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/cmd/dream/internal/early"
	"github.com/dreamkit/dream/cmd/dream/internal/hookplan"
	"github.com/dreamkit/dream/settings"
)

// hookLogLimit is the size past which the hook log is rotated once.
const hookLogLimit = 1 << 20

// cmdHook is for an agent's hook: it reads the hook JSON, locates project,
// memory and the current session, decides the cheap gates (enabled, time)
// in the foreground and, when they open, starts `dream maybe` detached, in
// its own session and process group, its output appended to hook.log in
// the state dir. Whatever happens it prints nothing and exits 0: an agent
// shows a hook's output to the user or the model, and treats some exit
// codes as "block" (2 blocks in Claude Code and Gemini CLI). Empty stdout is
// "no decision" to all three: Codex parses only a non-empty JSON object
// (codex-rs/hooks/src/engine/output_parser.rs parse_json), Gemini CLI asks
// for JSON or nothing (docs/hooks/reference.md, "Silence is Mandatory").
func cmdHook(a *app, args []string) (err error) {
	started := time.Now()
	// The log is opened on its first line: a hook that has nothing to say
	// (the closed time gate, nearly every turn) touches nothing on disk,
	// as the binary's early start does not either.
	logDir := ""
	var logFile *os.File
	openLog := func() io.Writer {
		if logFile == nil && logDir != "" {
			logFile = openHookLog(logDir)
		}
		if logFile == nil {
			return io.Discard
		}
		return logFile
	}
	defer func() {
		if logFile != nil {
			logFile.Close()
		}
	}()
	logf := func(format string, args ...any) {
		fmt.Fprintf(openLog(), "%s hook[%d] %s\n", time.Now().UTC().Format(time.RFC3339), os.Getpid(), fmt.Sprintf(format, args...))
	}
	defer func() {
		if r := recover(); r != nil {
			logf("panic: %v", r)
		}
		err = nil
	}()
	// The binary's early start may have read stdin already.
	payload, read := early.HookPayload()
	if !read {
		payload = hookplan.ReadStdin(a.stdin)
	}
	quiet := *a
	quiet.stdout, quiet.stderr = io.Discard, io.Discard
	fs, raw := quiet.newFlags("hook")
	pos, perr := quiet.parseQuiet(fs, raw, args, payload)
	if errors.Is(perr, flag.ErrHelp) {
		printCommandHelp(a.stdout, "hook", fs)
		return nil
	}
	stateDir := quiet.loaded.Settings.StateDir
	logDir = stateDir
	if logDir == "" { // the arguments did not parse: log where the defaults say
		logDir = settings.Defaults(a.env, a.home()).StateDir
	}
	if perr != nil || len(pos) > 0 {
		logf("ignored: bad arguments %q: %v", args, perr)
		return nil
	}
	job, why := early.PlanHook(quiet.loaded.Settings, quiet.session, payload, quiet.lookupEnv, time.Now())
	// Every enabled job walks its own funnel, in its own detached process.
	defer quiet.hookJobs(job, stateDir, passOn(fs, raw), logf, openLog)
	if job == nil {
		if why != "" {
			logf("%s event=%s session=%s: %s (%s)", orDash(job.HostName()), orDash(payload.HookEventName), orDash(payload.SessionID), why, time.Since(started).Round(time.Microsecond))
		}
		return nil
	}
	pid, err := spawnDetached(append(job.Argv(stateDir), passOn(fs, raw)...), openLog())
	if err != nil {
		logf("%s: could not start the dream: %v", job.Host, err)
		return nil
	}
	logf("%s event=%s session=%s: gates open, dream started in the background (pid %d) for %s (%s)", job.Host, orDash(payload.HookEventName), orDash(payload.SessionID), pid, job.Memory, time.Since(started).Round(time.Microsecond))
	return nil
}

// parseQuiet is parse without its stdin handling (the payload is read
// already) and with the payload's cwd as the default --repo.
func (a *app) parseQuiet(fs *flag.FlagSet, raw map[string]*string, args []string, p hookplan.Payload) ([]string, error) {
	hook := a.hook
	a.stdin = nil
	pos, err := a.parseWithRepo(fs, raw, args, hookplan.Repo(p))
	a.hook = hook
	return pos, err
}

// parseWithRepo is parse with a default for --repo.
func (a *app) parseWithRepo(fs *flag.FlagSet, raw map[string]*string, args []string, repo string) ([]string, error) {
	if repo != "" {
		if r := raw["repo"]; r != nil && *r == "" {
			*r = repo
			// Marked as set so that parse passes it on as a flag value.
			args = append([]string{"--repo", repo}, args...)
		}
	}
	return a.parse(fs, raw, args)
}

// passOn is the settings flags the hook was given that its detached
// `dream maybe` must see too (gates, model, lock, sync): the hook decided
// its cheap gates with them, and maybe decides again. The locations are
// already in the job's own arguments.
func passOn(fs *flag.FlagSet, raw map[string]*string) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if _, setting := raw[f.Name]; !setting {
			return
		}
		switch f.Name {
		case "memory-dir", "sessions-dir", "repo", "host", "state-dir":
			return
		}
		out = append(out, "--"+f.Name, f.Value.String())
	})
	return out
}

// openHookLog opens hook.log in the state dir for appending, rotating it
// once past hookLogLimit; nil when the state dir cannot be made.
func openHookLog(stateDir string) *os.File {
	if stateDir == "" {
		return nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil
	}
	path := filepath.Join(stateDir, "hook.log")
	if info, err := os.Stat(path); err == nil && info.Size() > hookLogLimit {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// spawnDetached starts this binary with args in its own session, stdin
// from the null device and output to log, and does not wait for it.
func spawnDetached(args []string, log io.Writer) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, args...)
	// The dream runs with the agent's environment: its keys were set for
	// the agent, not given to dream (provider.Options.Inherited).
	cmd.Env = append(os.Environ(), startedByEnv+"=hook")
	cmd.Stdin = nil
	if f, ok := log.(*os.File); ok {
		cmd.Stdout, cmd.Stderr = f, f
	}
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	return pid, cmd.Process.Release()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
