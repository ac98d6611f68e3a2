package conformance

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// What Claude Code needs to run offline, found by trying: any API key, the
// base URL of the fake server, and IS_SANDBOX=1 so that
// --dangerously-skip-permissions is accepted when the tests run as root.
const claudeKey = "sk-ant-conformance-0000000000000000000000"

// claudeSandbox is a sandbox set up for Claude Code: its environment, and
// ~/.claude.json seeded so that the interactive UI starts without the
// onboarding screens (trusted says whether the project folder is trusted).
func claudeSandbox(t *testing.T, trusted bool) (*Sandbox, Agent) {
	t.Helper()
	a := requireAgent(t, "claude")
	s := newSandbox(t)
	s.Setenv("ANTHROPIC_API_KEY", claudeKey)
	s.Setenv("ANTHROPIC_BASE_URL", s.Fake.URL)
	s.Setenv("IS_SANDBOX", "1")
	seedClaudeConfig(s, trusted)
	return s, a
}

// seedClaudeConfig writes ~/.claude.json as Claude keeps it after its
// onboarding: done, the API key approved, and the project's trust record.
func seedClaudeConfig(s *Sandbox, trusted bool) {
	s.t.Helper()
	cfg := map[string]any{
		"hasCompletedOnboarding":        true,
		"lastOnboardingVersion":         "2.1.197",
		"theme":                         "dark",
		"bypassPermissionsModeAccepted": true,
		"customApiKeyResponses":         map[string]any{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
	}
	if trusted {
		cfg["projects"] = map[string]any{s.Project: map[string]any{"hasTrustDialogAccepted": true}}
	}
	s.WriteJSON(".claude.json", cfg)
}

// claudePrint runs one `claude -p` session in the project and fails the
// test unless it answers.
func claudePrint(s *Sandbox, a Agent, prompt string, extra ...string) Result {
	s.t.Helper()
	args := append([]string{"-p", prompt, "--dangerously-skip-permissions"}, extra...)
	r := s.Run(2*time.Minute, s.Project, a.Bin, args...)
	if r.Err != nil || !strings.Contains(r.Stdout, fakeAnswer) {
		s.t.Fatalf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", r.Err, r.Stdout, tail(r.Stderr, 4000))
	}
	return r
}

// claudeTurn is what one of Claude's requests to the fake server showed of
// its memory.
type claudeTurn struct {
	// MemoryDir is the directory the system prompt tells the model its
	// memory lives in, without the trailing separator.
	MemoryDir string
	// IndexPath and Index are the MEMORY.md Claude loaded and its content as
	// sent; Loaded is false when no index was sent.
	IndexPath, Index string
	Loaded           bool
}

var claudeMemoryDirRE = regexp.MustCompile("You have a persistent file-based memory at `([^`]+)`")

// autoMemoryHeader is how Claude introduces the loaded MEMORY.md.
const autoMemoryHeader = " (user's auto-memory, persists across conversations):\n\n"

// claudeTurns decodes the Messages API requests Claude sent the fake
// server that carry its main prompt (not a side request such as a title).
func claudeTurns(t *testing.T, s *Sandbox) []claudeTurn {
	t.Helper()
	var out []claudeTurn
	for _, r := range s.Fake.Requests() {
		if !strings.HasSuffix(strings.TrimSuffix(r.Path, "/"), "/messages") {
			continue
		}
		var req struct {
			System   json.RawMessage `json:"system"`
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatalf("a request Claude sent does not decode: %v", err)
		}
		m := claudeMemoryDirRE.FindSubmatch(req.System)
		if m == nil {
			continue
		}
		var sys string
		_ = json.Unmarshal(append(append([]byte(`"`), m[1]...), '"'), &sys)
		turn := claudeTurn{MemoryDir: strings.TrimRight(sys, "/")}
		if len(req.Messages) > 0 {
			for _, text := range contentTexts(req.Messages[0].Content) {
				path, index, ok := cutLoadedIndex(text)
				if ok {
					turn.IndexPath, turn.Index, turn.Loaded = path, index, true
					break
				}
			}
		}
		out = append(out, turn)
	}
	return out
}

// lastClaudeTurn is the last main request Claude sent; the test fails if
// there was none.
func lastClaudeTurn(t *testing.T, s *Sandbox) claudeTurn {
	t.Helper()
	turns := claudeTurns(t, s)
	if len(turns) == 0 {
		t.Fatalf("Claude sent no request with its memory prompt (%d requests in all)", len(s.Fake.Requests()))
	}
	return turns[len(turns)-1]
}

// contentTexts returns the text blocks of a message's content (a string or
// an array of blocks).
func contentTexts(raw json.RawMessage) []string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return []string{str}
	}
	var blocks []struct {
		Type, Text string
	}
	_ = json.Unmarshal(raw, &blocks)
	var out []string
	for _, b := range blocks {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	return out
}

// cutLoadedIndex finds, in the context reminder Claude prepends to the
// first user message, "Contents of PATH (user's auto-memory, ...):\n\n" and
// returns PATH and the content up to the next context section.
func cutLoadedIndex(text string) (path, content string, ok bool) {
	i := strings.Index(text, autoMemoryHeader)
	if i < 0 {
		return "", "", false
	}
	start := strings.LastIndex(text[:i], "Contents of ")
	if start < 0 {
		return "", "", false
	}
	path = text[start+len("Contents of ") : i]
	content = text[i+len(autoMemoryHeader):]
	// The next section of the reminder is the date; the index ends there.
	if j := strings.LastIndex(content, "\n# currentDate\n"); j >= 0 {
		content = content[:j]
	}
	return path, content, true
}

// dreamLayout is the part of `dream status --json` these tests read.
type dreamLayout struct {
	MemoryDir          string `json:"memory_dir"`
	SessionsDir        string `json:"sessions_dir"`
	SessionsTouched    int    `json:"sessions_touched_since"`
	LastConsolidatedAt *string
	Layout             struct {
		MemoryDir   string `json:"memory_dir"`
		SessionsDir string `json:"sessions_dir"`
		Sources     []struct {
			What, Path, From string
		} `json:"sources"`
		Assumptions []string `json:"assumptions"`
	} `json:"layout"`
}

// firstClaudeSession runs one `claude -p` session, which makes Claude's
// memory dir, and returns dream's status for the project; the test fails
// unless the dir dream derives is the one Claude's prompt named.
func firstClaudeSession(t *testing.T, s *Sandbox, a Agent) dreamLayout {
	t.Helper()
	claudePrint(s, a, "hello")
	st := dreamStatus(s)
	if turn := lastClaudeTurn(t, s); turn.MemoryDir != st.MemoryDir {
		t.Fatalf("Claude's memory dir is %s, dream's %s", turn.MemoryDir, st.MemoryDir)
	}
	return st
}

// dreamStatus is `dream status --host claude --json` in the project.
func dreamStatus(s *Sandbox, args ...string) dreamLayout {
	s.t.Helper()
	var st dreamLayout
	s.DreamJSON(&st, append([]string{"status", "--host", "claude"}, args...)...)
	return st
}

// sessionFiles lists the top-level transcripts Claude wrote for the
// project: what its own session count is made of.
func sessionFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("Claude's sessions dir: %v", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, strings.TrimSuffix(e.Name(), ".jsonl"))
		}
	}
	return out
}

// claudeTUI runs one interactive session on a pty: it answers the trust
// dialog when Claude shows one (trust: "Yes, I trust this folder", else
// "No, exit", which ends the session there), sends prompt, waits for the
// fake model's answer and exits with Ctrl-D twice, as a person would. It
// returns the terminal, exited.
func claudeTUI(t *testing.T, s *Sandbox, a Agent, trust bool, prompt string) *Term {
	t.Helper()
	tm := s.StartTerm(s.Project, a.Bin)
	ready := func() bool { return strings.Contains(tm.Text(), "? for shortcuts") }
	dialog := func() bool { return strings.Contains(tm.Text(), "Yes, I trust this folder") }
	Eventually(t, time.Minute, "Claude's UI is up", func() bool { return ready() || dialog() || tm.Exited() })
	if dialog() && !ready() {
		t.Logf("trust dialog: %s", tm.Text())
		if !trust {
			tm.Type("\x1b[B") // down to "No, exit"
			time.Sleep(300 * time.Millisecond)
			tm.Type("\r")
			if err := tm.Wait(30 * time.Second); err != nil {
				t.Logf("claude exited: %v", err)
			}
			return tm
		}
		tm.Type("\r")
		Eventually(t, time.Minute, "Claude's prompt after the trust dialog", ready)
	}
	off := tm.Len()
	tm.Type(prompt)
	time.Sleep(300 * time.Millisecond)
	tm.Type("\r")
	tm.WaitFor(off, fakeAnswer, 2*time.Minute)
	tm.Type("\x04")
	time.Sleep(300 * time.Millisecond)
	tm.Type("\x04")
	if err := tm.Wait(30 * time.Second); err != nil {
		t.Fatalf("claude did not exit after Ctrl-D twice: %v", err)
	}
	return tm
}
