package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/settings"
)

// hookStdinWait is how long `dream hook` waits for the agent's JSON before
// going on without it: an agent that never closes stdin must not hold the
// hook (and the agent's exit) hostage.
const hookStdinWait = 300 * time.Millisecond

// hookLogLimit is the size past which the hook log is rotated once.
const hookLogLimit = 1 << 20

// hookPayload is what Claude Code, Codex and Gemini CLI send their command
// hooks on stdin (Claude Code hooks reference; codex-rs/hooks/schema
// stop.command.input.schema.json; Gemini CLI docs/hooks/reference.md).
type hookPayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Reason         string `json:"reason"`
	StopHookActive bool   `json:"stop_hook_active"`
}

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
	var logw io.Writer = io.Discard
	logf := func(format string, args ...any) {
		fmt.Fprintf(logw, "%s hook[%d] %s\n", time.Now().UTC().Format(time.RFC3339), os.Getpid(), fmt.Sprintf(format, args...))
	}
	defer func() {
		if r := recover(); r != nil {
			logf("panic: %v", r)
		}
		err = nil
	}()
	payload := readHookStdin(a.stdin)
	quiet := *a
	quiet.stdout, quiet.stderr = io.Discard, io.Discard
	fs, raw := quiet.newFlags("hook")
	pos, perr := quiet.parseQuiet(fs, raw, args, payload)
	if errors.Is(perr, flag.ErrHelp) {
		printCommandHelp(a.stdout, "hook", fs)
		return nil
	}
	stateDir := quiet.loaded.Settings.StateDir
	logDir := stateDir
	if logDir == "" { // the arguments did not parse: log where the defaults say
		logDir = settings.Defaults(a.env, a.home()).StateDir
	}
	if f := openHookLog(logDir); f != nil {
		defer f.Close()
		logw = f
	}
	if perr != nil || len(pos) > 0 {
		logf("ignored: bad arguments %q: %v", args, perr)
		return nil
	}
	job, why := quiet.planHook(payload)
	if job == nil {
		if why != "" {
			logf("%s event=%s session=%s: %s (%s)", orDash(job.hostName()), orDash(payload.HookEventName), orDash(payload.SessionID), why, time.Since(started).Round(time.Microsecond))
		}
		return nil
	}
	pid, err := spawnDetached(append(job.argv(stateDir), passOn(fs, raw)...), logw)
	if err != nil {
		logf("%s: could not start the dream: %v", job.host, err)
		return nil
	}
	logf("%s event=%s session=%s: gates open, dream started in the background (pid %d) for %s (%s)", job.host, orDash(payload.HookEventName), orDash(payload.SessionID), pid, job.memory, time.Since(started).Round(time.Microsecond))
	return nil
}

// readHookStdin decodes one JSON object from r, waiting at most
// hookStdinWait; anything else (nothing, junk, a hang) is an empty payload.
func readHookStdin(r io.Reader) hookPayload {
	var p hookPayload
	if r == nil {
		return p
	}
	done := make(chan hookPayload, 1)
	go func() {
		var q hookPayload
		_ = json.NewDecoder(io.LimitReader(r, hookPayloadLimit)).Decode(&q)
		done <- q
	}()
	select {
	case p = <-done:
	case <-time.After(hookStdinWait):
	}
	return p
}

// parseQuiet is parse without its stdin handling (the payload is read
// already) and with the payload's cwd as the default --repo.
func (a *app) parseQuiet(fs *flag.FlagSet, raw map[string]*string, args []string, p hookPayload) ([]string, error) {
	hook := a.hook
	a.stdin = nil
	pos, err := a.parseWithRepo(fs, raw, args, hookRepo(p))
	a.hook = hook
	return pos, err
}

// hookRepo is the directory the agent worked in: the payload's cwd, or,
// without one, the cwd the transcript's first record names (Claude Code
// and Gemini CLI records carry "cwd", a Codex rollout's session_meta its
// payload.cwd). Only an existing absolute directory is taken.
func hookRepo(p hookPayload) string {
	dir := p.CWD
	if dir == "" && filepath.IsAbs(p.TranscriptPath) {
		if line, ok := gate.FirstLine(filepath.Clean(p.TranscriptPath)); ok {
			var rec struct {
				CWD     string `json:"cwd"`
				Payload struct {
					CWD string `json:"cwd"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &rec) == nil {
				dir = rec.CWD
				if dir == "" {
					dir = rec.Payload.CWD
				}
			}
		}
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return ""
	}
	return filepath.Clean(dir)
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

// hookJob is a dream the hook decided to start.
type hookJob struct {
	host, memory, sessions, repo, session string
}

func (j *hookJob) hostName() string {
	if j == nil {
		return ""
	}
	return j.host
}

// argv is the detached `dream maybe` for the job.
func (j *hookJob) argv(stateDir string) []string {
	args := []string{"maybe", "--memory-dir", j.memory, "--repo", j.repo}
	if j.host != "" {
		args = append(args, "--host", j.host)
	}
	if j.sessions != "" {
		args = append(args, "--sessions-dir", j.sessions)
	}
	if j.session != "" {
		args = append(args, "--session", j.session)
	}
	if stateDir != "" {
		args = append(args, "--state-dir", stateDir)
	}
	return args
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

// planHook locates the project from the payload and decides the cheap
// gates. A nil job comes with the reason nothing starts.
func (a *app) planHook(p hookPayload) (*hookJob, string) {
	s := a.loaded.Settings
	if !s.Enabled {
		return nil, "dreaming is disabled"
	}
	name := s.Host
	if name == "" {
		name = hostFromTranscript(p.TranscriptPath, a.home(), a.env)
	}
	repo := s.Repo
	l, err := a.resolveLayout(name, s.MemoryDir, repo)
	if err != nil {
		return nil, err.Error()
	}
	// The code the memory describes is the checkout, not the subdirectory
	// the agent's shell happened to be in.
	j := &hookJob{repo: host.WorktreeRoot(repo), memory: s.MemoryDir, sessions: s.SessionsDir, session: p.SessionID}
	if l != nil {
		j.host = l.Host
		if j.memory == "" {
			j.memory = l.MemoryDir
		}
		if j.sessions == "" {
			j.sessions = l.SessionsDir
			if dir, ok := transcriptSessionsDir(*l, p.TranscriptPath); ok {
				j.sessions = dir
			}
		}
	}
	if j.memory == "" {
		return nil, "no memory directory for " + repo
	}
	if a.session != "" {
		j.session = a.session
	}
	if strings.ContainsAny(j.session, "/\\\x00") {
		j.session = ""
	}
	if info, err := os.Stat(j.memory); err != nil || !info.IsDir() {
		return nil, "memory directory " + j.memory + " does not exist yet"
	}
	// The time gate, as the funnel decides it (fastgate.go): closed only
	// when `dream maybe` would say so, with no dead dream to recover.
	if _, closed := timeGateClosed(s, j.memory, time.Now()); closed {
		return nil, ""
	}
	return j, ""
}

// hostFromTranscript names the agent whose home transcript lies in, by
// which agent's layout claims the directory; "" when none does.
func hostFromTranscript(transcript, home string, env func(string) (string, bool)) string {
	if transcript == "" || !filepath.IsAbs(transcript) {
		return ""
	}
	transcript = filepath.Clean(transcript)
	checks := []struct{ name, variable, dflt, sub string }{
		{"claude", "CLAUDE_CONFIG_DIR", ".claude", "projects"},
		{"codex", "CODEX_HOME", ".codex", "sessions"},
		{"gemini", "", ".gemini", "tmp"},
	}
	for _, c := range checks {
		base := filepath.Join(home, c.dflt)
		if c.variable != "" {
			if v, ok := env(c.variable); ok && filepath.IsAbs(fsutil.ExpandHome(v, home)) {
				base = filepath.Clean(fsutil.ExpandHome(v, home))
			}
		} else if v, ok := env("GEMINI_CLI_HOME"); ok && filepath.IsAbs(v) {
			base = filepath.Join(v, c.dflt)
		}
		if inside(transcript, filepath.Join(base, c.sub)) {
			return c.name
		}
	}
	return ""
}

// transcriptSessionsDir is the sessions dir the transcript path shows, when
// it is inside the layout's own tree (an untrusted path outside it is
// ignored): Claude Code's project folder of the session's directory,
// Gemini's chats/.
func transcriptSessionsDir(l host.Layout, transcript string) (string, bool) {
	if transcript == "" || !filepath.IsAbs(transcript) {
		return "", false
	}
	dir := filepath.Dir(filepath.Clean(transcript))
	switch l.Host {
	case "claude":
		projects := filepath.Dir(l.SessionsDir)
		return dir, filepath.Dir(dir) == projects
	case "gemini":
		return dir, dir == l.SessionsDir
	}
	return "", false
}

// inside reports whether path lies strictly below dir.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
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
