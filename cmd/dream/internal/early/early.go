// Package early answers the two questions a hook asks on nearly every
// turn, `dream maybe` and `dream hook` with the time gate closed, before
// the rest of the binary has started.
//
// A Go program runs every linked package's initialisers before main, and
// dream links two model SDKs, gRPC and protobuf (for the etcd lock), the
// MCP SDK, a Markdown parser and a metrics library: 3 to 5 ms of
// initialisers and a thousand page faults, on every turn of every agent,
// to print "no dream". The Go spec fixes the order (since Go 1.21):
// packages are sorted by import path, and each step initialises the first
// one whose imports are all initialised. This package imports only light
// packages (the settings, the lock file, the journal's leftovers, the host
// layouts), so its init runs as soon as they are ready: before the SDKs'
// root packages, gRPC's client, goldmark, prometheus and everything else
// of dream, and it exits there when it has answered.
//
// It answers only when it is certain the full command would do exactly
// the same: any doubt (a flag it does not know, a warning to print, a
// provider setting it cannot check without its SDK, nanobot's flow, the
// etcd lock, a dead holder or a journal to recover, a hook that would log
// or start a dream) returns to the full command, which decides everything
// again from the same command line. What it read of stdin is handed over
// (Stdin, HookPayload).
//
// It runs before main installs its signal handling: a SIGINT or SIGTERM
// while `maybe --hook` or `hook` waits for the agent's payload ends the
// process at once, before anything was decided or written.
package early

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
	"github.com/dreamkit/dream/cmd/dream/internal/hookplan"
	"github.com/dreamkit/dream/internal/providername"
	"github.com/dreamkit/dream/settings"
)

// What init read from the process's stdin before it handed the command
// over: the bytes `maybe --hook` read (Stdin replays them), or the payload
// `dream hook` decoded (HookPayload). They are set once, by init, in the
// dream binary only (a test binary's arguments are never a command).
var (
	handover    io.Reader
	hookPayload *hookplan.Payload
)

func init() {
	args := os.Args[1:]
	switch {
	case len(args) > 0 && args[0] == "maybe":
		in := &readRecorder{r: os.Stdin}
		if Maybe(args, in, os.Stdout, os.LookupEnv, time.Now) {
			os.Exit(0)
		}
		handover = in.rest(os.Stdin)
	case len(args) > 0 && args[0] == "hook":
		p, done := Hook(args, os.Stdin, os.LookupEnv, time.Now)
		if done {
			os.Exit(0)
		}
		hookPayload = p
	}
}

// HookPayload is the payload the early start of `dream hook` read from
// stdin before it handed the command over, if it did: stdin is spent, and
// the full command plans with this instead.
func HookPayload() (hookplan.Payload, bool) {
	if hookPayload == nil {
		return hookplan.Payload{}, false
	}
	return *hookPayload, true
}

// Stdin is the process's stdin as the full command must read it: what the
// early start read of it first, then what it did not reach.
func Stdin() io.Reader {
	if handover == nil {
		return os.Stdin
	}
	return handover
}

// readRecorder keeps what is read through it, and how the reading ended.
type readRecorder struct {
	r    io.Reader
	read []byte
	err  error // io.EOF once the end was reached
}

func (rr *readRecorder) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	rr.read = append(rr.read, p[:n]...)
	if err != nil && rr.err == nil {
		rr.err = err
	}
	return n, err
}

// rest is what a reader of the whole of stdin must see after the early
// start read some of it: the bytes read, then, if the reading ended at the
// end of input, the end (reading a terminal again after its end would
// wait for a second one), or its error, or else the rest of in.
func (rr *readRecorder) rest(in io.Reader) io.Reader {
	if len(rr.read) == 0 && rr.err == nil {
		return in
	}
	switch rr.err {
	case nil:
		return io.MultiReader(bytes.NewReader(rr.read), in)
	case io.EOF:
		return bytes.NewReader(rr.read)
	}
	return io.MultiReader(bytes.NewReader(rr.read), errReader{rr.err})
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// Maybe settles `dream maybe` (args as os.Args[1:]) when the time gate is
// closed and nothing else is in doubt: it writes what the full command
// writes on stdout and reports done (exit 0). Otherwise it writes nothing;
// what it read of stdin (for --hook) the caller replays to the full
// command (readRecorder). now is read after stdin, as the full command reads the clock after it:
// a payload that comes late must not meet a gate decided before it.
func Maybe(args []string, stdin io.Reader, stdout io.Writer, env func(string) (string, bool), now func() time.Time) (done bool) {
	if len(args) == 0 || args[0] != "maybe" {
		return false
	}
	args = args[1:]
	var session string
	var hook, jsonOut bool
	fs, raw := cmdline.New("maybe", &session, &hook, &jsonOut)
	if f, _ := cmdline.MissingValue(fs, args); f != nil {
		return false
	}
	pos, flags, err := cmdline.Parse(fs, raw, args)
	if err != nil || len(pos) > 0 {
		return false
	}
	if hook && stdin != nil {
		read, err := io.ReadAll(io.LimitReader(stdin, cmdline.HookPayloadLimit))
		if err != nil || cmdline.HookPayload(read, &session, flags) != nil {
			return false
		}
	}
	l, err := cmdline.LoadSettings(env, flags)
	if err != nil || len(l.Warnings) > 0 {
		return false
	}
	s := l.Settings
	if !providerCertain(s, env) {
		return false
	}
	mem, ok := memoryDir(s, env)
	if !ok {
		return false
	}
	detail, closed := TimeGateClosed(s, mem, now())
	if !closed {
		return false
	}
	answer(stdout, jsonOut, detail)
	return true
}

// answer writes `dream maybe`'s answer for the closed time gate, as text
// or as JSON.
func answer(w io.Writer, jsonOut bool, detail string) {
	if !jsonOut {
		cmdline.SayGateClosed(w, TimeGate, detail)
		return
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Gate   string `json:"gate"`
		Detail string `json:"detail"`
	}{TimeGate, detail})
}

// Hook settles `dream hook` (args as os.Args[1:]) when the hook would
// start nothing and say nothing: its arguments parse and the time gate is
// closed (the hook's silent case: nothing on stdout, nothing in its log,
// exit 0). Otherwise it returns the payload it read from stdin (nil when
// it read none), for the full command, which logs what it decides. now is
// read after stdin (see Maybe).
func Hook(args []string, stdin io.Reader, env func(string) (string, bool), now func() time.Time) (read *hookplan.Payload, done bool) {
	if len(args) == 0 || args[0] != "hook" {
		return nil, false
	}
	args = args[1:]
	p := hookplan.ReadStdin(stdin)
	var session string
	var hook, jsonOut bool
	fs, raw := cmdline.New("hook", &session, &hook, &jsonOut)
	if repo := hookplan.Repo(p); repo != "" && raw["repo"] != nil {
		// The payload's cwd is the default --repo: given first, so that a
		// --repo on the hook's own line wins (main's parseWithRepo).
		args = append([]string{"--repo", repo}, args...)
	}
	if f, _ := cmdline.MissingValue(fs, args); f != nil {
		return &p, false
	}
	pos, flags, err := cmdline.Parse(fs, raw, args)
	if err != nil || len(pos) > 0 {
		return &p, false
	}
	l, err := cmdline.LoadSettings(env, flags)
	if err != nil {
		return &p, false
	}
	job, why := PlanHook(l.Settings, session, p, env, now())
	// Jobs ([[job]] tables) have funnels of their own: the full command
	// plans them.
	return &p, job == nil && why == "" && len(l.Jobs) == 0
}

// PlanHook is hookplan.Plan with the time gate decided as `dream maybe`
// would decide it (TimeGateClosed): a closed gate is no job and nothing to
// say, the hook's silent case; never with the etcd lock, whose time gate
// the detached maybe asks the cluster about.
func PlanHook(s settings.Settings, session string, p hookplan.Payload, env func(string) (string, bool), now time.Time) (*hookplan.Job, string) {
	job, why := hookplan.Plan(s, session, p, env)
	if job != nil {
		if _, closed := TimeGateClosed(s, job.Memory, now); closed {
			return nil, ""
		}
	}
	return job, why
}

// providerCertain reports whether provider.Choose would accept s: the
// offline engine, or a provider whose key is set and whose base URL is
// the SDK's own. A base URL set anywhere is checked by the provider's
// package, which this one does not link, so it falls to the full command.
func providerCertain(s settings.Settings, env func(string) (string, bool)) bool {
	getenv := func(k string) string { v, _ := env(k); return v }
	name, _ := providername.Resolve(s.Provider, getenv)
	switch name {
	case providername.Offline:
		return true
	case providername.Anthropic:
		return getenv(providername.AnthropicKey) != "" && s.BaseURL == "" && getenv(providername.AnthropicBase) == ""
	case providername.OpenAI:
		return getenv(providername.OpenAIKey) != "" && s.BaseURL == "" && getenv(providername.OpenAIBase) == ""
	}
	return false
}

// memoryDir is the memory dir the full command's locations resolve for
// s: the memory_dir setting, else the host layout's (named by the host
// setting, or detected from the repo when neither is set). Nanobot's
// flow dreams over its workspace, not the memory dir, and a layout that
// fails to resolve is an error the full command reports: both are not ok.
func memoryDir(s settings.Settings, env func(string) (string, bool)) (string, bool) {
	if s.Host == Nanobot {
		return "", false
	}
	l, err := cmdline.Layout(s.Host, s.MemoryDir, s.Repo, cmdline.Home(env), env)
	if err != nil || (l != nil && l.Host == Nanobot) {
		return "", false
	}
	mem := s.MemoryDir
	if mem == "" && l != nil {
		mem = l.MemoryDir
	}
	return mem, mem != ""
}

// Names the root package defines too (nanobot.HostName, dream.GateTime),
// which this package cannot import without the SDKs; a test in package
// main holds them equal.
const (
	Nanobot  = "nanobot"
	TimeGate = "time"
)
