package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/cmd/dream/internal/early"
	"github.com/dreamkit/dream/internal/nanobot"
)

// heavyInit matches the init trace line of a package the early start
// exists to skip: the SDKs, gRPC, protobuf's registry users, goldmark (any
// of its packages: internal/indexcount, not internal/host, imports it, so
// that its initialisers and the ones they wait for come after the early
// answer; issue 30).
var heavyInit = regexp.MustCompile(`(?m)^init (github\.com/openai/openai-go/v3|github\.com/anthropics/anthropic-sdk-go/v2|google\.golang\.org/grpc|github\.com/yuin/goldmark(/\S+)?|github\.com/prometheus/client_golang/prometheus) @`)

// TestEarlyStartAnswersBeforeTheSDKs: `dream maybe` with the time gate
// closed is answered by package early's init, before the SDKs, gRPC and
// goldmark initialise (the Go runtime's init trace shows none of them),
// and prints byte for byte what the full command prints (Main in this
// process). Where the early start cannot be sure (a base URL only the SDK
// checks, a warning to print), the full command answers, with the same
// stdout.
func TestEarlyStartAnswersBeforeTheSDKs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		env    []string
		stdin  bool // send a hook payload naming the repo
		early  bool
		stderr string // what stderr must also say
	}{
		{name: "text", early: true},
		{name: "json", args: []string{"--json"}, early: true},
		{name: "anthropic key and a hook payload", args: []string{"--hook", "--json"}, env: []string{"ANTHROPIC_API_KEY=sk-test"}, stdin: true, early: true},
		{name: "base URL: the full command", env: []string{"ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"}},
		{name: "warning: the full command", env: []string{"DREAM_MIN_SESSIONS=many"}, stderr: "dream: warning:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			writeLock(t, w.mem, "", time.Now().Add(-2*time.Hour))
			args := append([]string{"maybe", "--memory-dir", w.mem, "--sessions-dir", w.sessions, "--state-dir", w.state}, tc.args...)
			payload := `{"session_id":"s1","cwd":"` + w.repo + `","hook_event_name":"Stop"}`
			if !tc.stdin {
				args = append(args, "--repo", w.repo)
				payload = ""
			}
			env := append(append([]string{}, w.env...), tc.env...)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, binPath, args...)
			cmd.Env = append(env, "GODEBUG=inittrace=1")
			cmd.Dir = w.root
			cmd.Stdin = strings.NewReader(payload)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("dream %v: %v\n%s", args, err, errb.String())
			}
			if heavy := heavyInit.FindString(errb.String()); (heavy == "") != tc.early {
				t.Fatalf("early answer %v, want %v: init trace has %q", heavy == "", tc.early, heavy)
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Fatalf("stderr lacks %q:\n%s", tc.stderr, errb.String())
			}

			var inOut, inErr bytes.Buffer
			lookup := func(k string) (string, bool) {
				for i := len(env) - 1; i >= 0; i-- {
					if name, v, ok := strings.Cut(env[i], "="); ok && name == k {
						return v, true
					}
				}
				return "", false
			}
			if code := Main(context.Background(), args, strings.NewReader(payload), &inOut, &inErr, lookup); code != 0 {
				t.Fatalf("Main: exit %d\n%s", code, inErr.String())
			}
			if out.String() != inOut.String() || !strings.Contains(out.String(), "time") {
				t.Fatalf("the binary printed\n%s\nthe full command\n%s", out.String(), inOut.String())
			}
		})
	}
}

// TestEarlyStartNamesMatchTheRoot: the names package early spells out
// because it cannot import the root package.
func TestEarlyStartNamesMatchTheRoot(t *testing.T) {
	if early.Nanobot != nanobot.HostName || early.TimeGate != dream.GateTime {
		t.Fatalf("early %q %q, root %q %q", early.Nanobot, early.TimeGate, nanobot.HostName, dream.GateTime)
	}
}

// TestEarlyStartSettlesAQuietHook: an agent's hook with the time gate
// closed ends in the early start too: exit 0, nothing on stdout, nothing
// logged, and none of the SDKs initialised; with the gate open the full
// command takes the same payload over and starts the dream (logged).
func TestEarlyStartSettlesAQuietHook(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeLock(t, w.mem, "", time.Now().Add(-2*time.Hour))
	run := func(extra ...string) (stdout, trace string) {
		t.Helper()
		args := append([]string{"hook", "--memory-dir", w.mem, "--sessions-dir", w.sessions, "--state-dir", w.state}, extra...)
		cmd := exec.Command(binPath, args...)
		cmd.Env = append(append([]string{}, w.env...), "GODEBUG=inittrace=1", "DREAM_PROVIDER=offline")
		cmd.Dir = w.root
		cmd.Stdin = strings.NewReader(`{"session_id":"s5","cwd":"` + w.repo + `","hook_event_name":"Stop"}`)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("dream %v: %v\n%s", args, err, errb.String())
		}
		return out.String(), errb.String()
	}
	out, trace := run()
	if heavy := heavyInit.FindString(trace); out != "" || heavy != "" {
		t.Fatalf("closed gate: stdout %q, init trace has %q", out, heavy)
	}
	if _, err := os.Stat(filepath.Join(w.state, "hook.log")); !os.IsNotExist(err) {
		t.Fatalf("a quiet hook touched its log (%v)", err)
	}
	// The full command, in this process, is as quiet.
	hookArgs := []string{"hook", "--memory-dir", w.mem, "--sessions-dir", w.sessions, "--state-dir", w.state}
	lookup := func(k string) (string, bool) {
		for _, kv := range w.env {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v, true
			}
		}
		return "", false
	}
	var inOut bytes.Buffer
	if code := Main(context.Background(), hookArgs, strings.NewReader(`{"session_id":"s5","cwd":"`+w.repo+`"}`), &inOut, &inOut, lookup); code != 0 || inOut.Len() != 0 {
		t.Fatalf("full command: exit %d, output %q", code, inOut.String())
	}
	if _, err := os.Stat(filepath.Join(w.state, "hook.log")); !os.IsNotExist(err) {
		t.Fatalf("the full command's quiet hook touched its log (%v)", err)
	}
	out, trace = run("--min-hours", "1", "--min-sessions", "99")
	if heavy := heavyInit.FindString(trace); out != "" || heavy == "" {
		t.Fatalf("open gate: stdout %q, init trace has %q: want the full command", out, heavy)
	}
	b, err := os.ReadFile(filepath.Join(w.state, "hook.log"))
	if err != nil || !strings.Contains(string(b), "session=s5: gates open, dream started") {
		t.Fatalf("open gate: hook.log %q (%v): want the payload's session and the start", b, err)
	}
	// The detached maybe stops at the sessions gate and says so in the log;
	// wait for it, so that nothing writes to the state dir after the test.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		b, _ = os.ReadFile(filepath.Join(w.state, "hook.log"))
		if strings.Contains(string(b), "no dream: the sessions gate is closed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the detached maybe did not finish; hook.log:\n%s", b)
		}
	}
}
