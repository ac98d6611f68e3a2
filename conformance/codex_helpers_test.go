package conformance

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm/llmtest"
)

// What Codex CLI needs to run offline, found by trying: a model provider
// in config.toml whose base_url is the fake server and whose wire_api is
// "responses", with the key in a variable it names. The project folder is
// marked trusted as Codex's own first-run dialog would, so that the
// interactive UI starts at its prompt.
const codexKeyVar = "CODEX_CONFORMANCE_KEY"

// codexSandbox is a sandbox set up for Codex: ~/.codex/config.toml with
// the fake provider, and the memories feature on when memories.
func codexSandbox(t *testing.T, memories bool) (*Sandbox, Agent) {
	t.Helper()
	a := requireAgent(t, "codex")
	s := newSandbox(t)
	s.Setenv(codexKeyVar, "conformance")
	// The app-server's log of hook runs (their start and end), on stderr.
	s.Setenv("RUST_LOG", "codex_app_server::outgoing_message=trace")
	config := "model = \"conformance-model\"\nmodel_provider = \"fake\"\n\n" +
		"[model_providers.fake]\nname = \"fake\"\nbase_url = \"" + s.Fake.URL + "/v1\"\nwire_api = \"responses\"\nenv_key = \"" + codexKeyVar + "\"\n\n" +
		"[projects." + tomlString(s.Project) + "]\ntrust_level = \"trusted\"\n"
	if memories {
		config += "\n[features]\nmemories = true\n"
	}
	s.WriteFile(s.codexHome("config.toml"), config)
	t.Cleanup(func() { stopCodexDaemon(s, a) })
	return s, a
}

// tomlString quotes a path for config.toml (a JSON string is a TOML basic
// string for every path a test makes).
func tomlString(s string) string { b, _ := json.Marshal(s); return string(b) }

// codexHome is a path under ~/.codex.
func (s *Sandbox) codexHome(rel ...string) string {
	return filepath.Join(append([]string{s.Home, ".codex"}, rel...)...)
}

// codexExec runs one `codex exec` session in the project and fails the
// test unless the fake model's answer came back.
func codexExec(s *Sandbox, a Agent, prompt string) Result {
	s.t.Helper()
	r := s.Run(2*time.Minute, s.Project, a.Bin, "exec", prompt)
	if r.Err != nil || !strings.Contains(r.Stdout+r.Stderr, fakeAnswer) {
		s.t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", r.Err, r.Stdout, tail(r.Stderr, 4000))
	}
	return r
}

// hookRunRE is the app-server's trace of a hook's start and end.
var hookRunRE = regexp.MustCompile(`(?m)^(\S+Z) TRACE codex_app_server::outgoing_message: app-server event: hook/(started|completed)`)

// codexHookRuns reads, from Codex's trace log, how long each hook took
// from start to end as Codex saw it.
func codexHookRuns(t *testing.T, log string) []time.Duration {
	t.Helper()
	var out []time.Duration
	var start time.Time
	for _, m := range hookRunRE.FindAllStringSubmatch(log, -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatalf("a trace time %q: %v", m[1], err)
		}
		if m[2] == "started" {
			start = at
		} else if !start.IsZero() {
			out = append(out, at.Sub(start))
			start = time.Time{}
		}
	}
	return out
}

// codexRollouts are the rollouts Codex wrote: thread id to the source its
// session_meta records.
func codexRollouts(t *testing.T, s *Sandbox) map[string]string {
	t.Helper()
	out := map[string]string{} // id -> session_meta.source
	filepath.WalkDir(s.codexHome("sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		line, _ := bufio.NewReaderSize(f, 1<<20).ReadBytes('\n')
		var meta struct {
			Payload struct {
				ID     string          `json:"id"`
				Source json.RawMessage `json:"source"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &meta) == nil && meta.Payload.ID != "" {
			var src string
			_ = json.Unmarshal(meta.Payload.Source, &src)
			out[meta.Payload.ID] = src
		}
		return nil
	})
	return out
}

// codexPrompts are the texts of the Responses requests Codex sent for a
// user turn (its own memory consolidation agent's are left out).
func codexPrompts(t *testing.T, s *Sandbox) []string {
	t.Helper()
	var out []string
	for _, r := range s.Fake.Requests() {
		if r.Protocol != llmtest.ProtocolResponses {
			continue
		}
		var req struct {
			Input []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"input"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatalf("a request Codex sent does not decode: %v", err)
		}
		var b strings.Builder
		for _, in := range req.Input {
			for _, c := range in.Content {
				b.WriteString(c.Text)
				b.WriteString("\n")
			}
		}
		if text := b.String(); !strings.Contains(text, "Memory Writing Agent") {
			out = append(out, text)
		}
	}
	return out
}

// codexSummarySection is memory_summary.md as Codex put it in its prompt.
func codexSummarySection(t *testing.T, prompt string) (string, bool) {
	t.Helper()
	const begin, end = "========= MEMORY_SUMMARY BEGINS =========\n", "\n========= MEMORY_SUMMARY ENDS"
	i := strings.Index(prompt, begin)
	if i < 0 {
		return "", false
	}
	rest := prompt[i+len(begin):]
	j := strings.Index(rest, end)
	if j < 0 {
		t.Fatalf("Codex's memory summary section is not closed")
	}
	return rest[:j], true
}

// codexTUI runs one interactive session on a pty: it waits for Codex's
// prompt, sends prompt, waits for the fake model's answer and quits with
// /quit, as a person would. Codex shows its prompt before its app-server
// is ready for a turn, and an Enter typed then is not a submission; a
// person presses it again, and so does this.
func codexTUI(t *testing.T, s *Sandbox, a Agent, prompt string) *Term {
	t.Helper()
	tm := s.StartTerm(s.Project, a.Bin)
	tm.WaitFor(0, "Ask Codex to do anything", 2*time.Minute)
	time.Sleep(3 * time.Second)
	off := tm.Len()
	tm.Type(prompt)
	time.Sleep(500 * time.Millisecond)
	answered := func() bool { return strings.Contains(tm.Since(off), fakeAnswer) }
	for try := 0; try < 4 && !answered(); try++ {
		tm.Type("\r")
		deadline := time.Now().Add(30 * time.Second)
		for !answered() && time.Now().Before(deadline) && !tm.Exited() {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !answered() {
		t.Fatalf("the fake model's answer never showed; the terminal shows:\n%s", tail(tm.Since(off), 3000))
	}
	time.Sleep(time.Second)
	tm.Type("/quit")
	time.Sleep(500 * time.Millisecond)
	tm.Type("\r")
	if err := tm.Wait(30 * time.Second); err != nil {
		t.Logf("codex after /quit: %v", err)
	}
	return tm
}

// stopCodexDaemon stops the app-server the interactive UI started in the
// background (it outlives the UI) and its pid-update loop, both ours.
func stopCodexDaemon(s *Sandbox, a Agent) {
	dir := s.codexHome("app-server-daemon")
	if _, err := os.Stat(dir); err != nil {
		return
	}
	cmd := exec.Command(a.Bin, "app-server", "daemon", "stop")
	cmd.Env, cmd.Stdout, cmd.Stderr = s.Environ(), io.Discard, io.Discard
	_ = cmd.Run()
	var updater struct{ PID int }
	if b, err := os.ReadFile(filepath.Join(dir, "daemon-updater.pid")); err == nil && json.Unmarshal(b, &updater) == nil && updater.PID > 0 {
		if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(updater.PID) + "/cmdline"); err == nil && strings.Contains(string(cmdline), "pid-update-loop") {
			_ = syscall.Kill(updater.PID, syscall.SIGTERM)
		}
	}
}

// codexStatus is `dream status --host codex --json`.
type codexStatusView struct {
	MemoryDir       string `json:"memory_dir"`
	SessionsTouched int    `json:"sessions_touched_since"`
	Gates           []struct {
		Name   string `json:"name"`
		Open   bool   `json:"open"`
		Detail string `json:"detail"`
	} `json:"gates"`
	Layout struct {
		NotLoaded string `json:"not_loaded"`
		Files     []struct {
			Path     string `json:"path"`
			Loaded   bool   `json:"loaded"`
			OnDemand bool   `json:"on_demand"`
			Writable bool   `json:"writable"`
			Limit    string `json:"limit"`
		} `json:"files"`
	} `json:"layout"`
}

func codexStatus(s *Sandbox, args ...string) codexStatusView {
	s.t.Helper()
	var st codexStatusView
	s.DreamJSON(&st, append([]string{"status", "--host", "codex"}, args...)...)
	return st
}

// hookLog is dream's hook log in the sandbox's state dir.
func (s *Sandbox) hookLog() string {
	b, _ := os.ReadFile(filepath.Join(s.Home, ".local", "state", "dream", "hook.log"))
	return string(b)
}
