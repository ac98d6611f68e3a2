// Package hookplan is what `dream hook` decides before it starts a dream:
// the agent's payload on stdin, the project, memory and session it names,
// and the enabled gate (the time gate is package early's, which plans a
// hook with this: early.PlanHook). The full command (package main) and the
// binary's early start plan a hook the same way; only the full command logs
// and starts the detached `dream maybe`.
package hookplan

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/settings"
)

// StdinWait is how long `dream hook` waits for the agent's JSON before
// going on without it: an agent that never closes stdin must not hold the
// hook (and the agent's exit) hostage.
const StdinWait = 300 * time.Millisecond

// Payload is what Claude Code, Codex and Gemini CLI send their command
// hooks on stdin (Claude Code hooks reference; codex-rs/hooks/schema
// stop.command.input.schema.json; Gemini CLI docs/hooks/reference.md).
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Reason         string `json:"reason"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// ReadStdin decodes one JSON object from r, waiting at most
// StdinWait; anything else (nothing, junk, a hang) is an empty payload.
func ReadStdin(r io.Reader) Payload {
	var p Payload
	if r == nil {
		return p
	}
	done := make(chan Payload, 1)
	go func() {
		var q Payload
		_ = json.NewDecoder(io.LimitReader(r, cmdline.HookPayloadLimit)).Decode(&q)
		done <- q
	}()
	select {
	case p = <-done:
	case <-time.After(StdinWait):
	}
	return p
}

// Repo is the directory the agent worked in: the payload's cwd, or,
// without one, the cwd the transcript's first record names (Claude Code
// and Gemini CLI records carry "cwd", a Codex rollout's session_meta its
// payload.cwd). Only an existing absolute directory is taken.
func Repo(p Payload) string {
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

// Job is a dream the hook decided to start.
type Job struct {
	Host, Memory, Sessions, Repo, Session string
}

// HostName is the job's host, "" for no job.
func (j *Job) HostName() string {
	if j == nil {
		return ""
	}
	return j.Host
}

// Argv is the detached `dream maybe` for the job.
func (j *Job) Argv(stateDir string) []string {
	args := []string{"maybe", "--memory-dir", j.Memory, "--repo", j.Repo}
	if j.Host != "" {
		args = append(args, "--host", j.Host)
	}
	if j.Sessions != "" {
		args = append(args, "--sessions-dir", j.Sessions)
	}
	if j.Session != "" {
		args = append(args, "--session", j.Session)
	}
	if stateDir != "" {
		args = append(args, "--state-dir", stateDir)
	}
	return args
}

// Plan locates the project from the payload and decides the enabled
// gate. A nil job comes with the reason nothing starts.
func Plan(s settings.Settings, session string, p Payload, env func(string) (string, bool)) (*Job, string) {
	home := cmdline.Home(env)
	if !s.Enabled {
		return nil, "dreaming is disabled"
	}
	name := s.Host
	if name == "" {
		name = HostFromTranscript(p.TranscriptPath, home, env)
	}
	repo := s.Repo
	l, err := cmdline.Layout(name, s.MemoryDir, repo, home, env)
	if err != nil {
		return nil, err.Error()
	}
	// The code the memory describes is the checkout, not the subdirectory
	// the agent's shell happened to be in.
	j := &Job{Repo: host.WorktreeRoot(repo), Memory: s.MemoryDir, Sessions: s.SessionsDir, Session: p.SessionID}
	if l != nil {
		j.Host = l.Host
		if j.Memory == "" {
			j.Memory = l.MemoryDir
		}
		if j.Sessions == "" {
			j.Sessions = l.SessionsDir
			if dir, ok := TranscriptSessionsDir(*l, p.TranscriptPath); ok {
				j.Sessions = dir
			}
		}
	}
	if j.Memory == "" {
		return nil, "no memory directory for " + repo
	}
	if session != "" {
		j.Session = session
	}
	if strings.ContainsAny(j.Session, "/\\\x00") {
		j.Session = ""
	}
	if info, err := os.Stat(j.Memory); err != nil || !info.IsDir() {
		return nil, "memory directory " + j.Memory + " does not exist yet"
	}
	// Codex's Stop hook runs after every turn: a memory left to Codex
	// must not start a `dream maybe` that only says so, each time.
	if l != nil && j.Memory == l.MemoryDir {
		if why := host.AgentOwns(*l, s.CodexMemoryOwner); why != "" {
			return nil, why
		}
	}
	return j, ""
}

// HostFromTranscript names the agent whose home transcript lies in, by
// which agent's layout claims the directory; "" when none does.
func HostFromTranscript(transcript, home string, env func(string) (string, bool)) string {
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

// TranscriptSessionsDir is the sessions dir the transcript path shows, when
// it is inside the layout's own tree (an untrusted path outside it is
// ignored): Claude Code's project folder of the session's directory,
// Gemini's chats/.
func TranscriptSessionsDir(l host.Layout, transcript string) (string, bool) {
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
