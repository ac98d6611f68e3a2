package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestClaudeLoadsTheMemoryDreamConsolidates: a marker planted in the
// memory dir dream derives reaches Claude's request; the system prompt
// names that same dir; a topic file is not in the prompt (Claude reads it
// on demand), as `dream status` now says.
func TestClaudeLoadsTheMemoryDreamConsolidates(t *testing.T) {
	s, a := claudeSandbox(t, true)
	check(t, a, "the memory dream consolidates is the memory Claude loads")
	st := firstClaudeSession(t, s, a)
	s.WriteFile(filepath.Join(st.MemoryDir, "MEMORY.md"), "- MARKER-INDEX-7f3a: the index line\n- [Deploys](deploys.md) — how we ship\n")
	s.WriteFile(filepath.Join(st.MemoryDir, "deploys.md"), "---\nname: deploys\n---\nMARKER-TOPIC-91c2\n")
	claudePrint(s, a, "hello")
	turn := lastClaudeTurn(t, s)
	if turn.MemoryDir != st.MemoryDir {
		t.Errorf("Claude's memory dir %s, dream's %s", turn.MemoryDir, st.MemoryDir)
	}
	if !turn.Loaded || turn.IndexPath != filepath.Join(st.MemoryDir, "MEMORY.md") || !strings.Contains(turn.Index, "MARKER-INDEX-7f3a") {
		t.Errorf("Claude did not load dream's MEMORY.md: loaded %v from %q: %q", turn.Loaded, turn.IndexPath, turn.Index)
	}
	for _, r := range s.Fake.Requests() {
		if strings.Contains(string(r.Body), "MARKER-TOPIC-91c2") {
			t.Errorf("a topic file was put in the prompt; dream's status says topics are read when needed")
		}
	}
	status := s.Dream("status", "--host", "claude")
	for _, want := range []string{"MEMORY.md  index, markdown, writable, loaded into every session", "**/*.md  document, markdown, writable, read by the agent when needed"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
}

// TestClaudeHookRunsInTime: with `dream init claude` (from a binary named
// dream-linux-amd64, twice), Claude runs one dream hook at the end of each
// session and reports it completed (Claude cancels a SessionEnd hook after
// about 1.5 s); once the gates open the hook starts the dream in the
// background and the dream completes after Claude has exited.
func TestClaudeHookRunsInTime(t *testing.T) {
	s, a := claudeSandbox(t, true)
	check(t, a, "dream's hook runs once per session and returns in time")
	release := filepath.Join(s.Home, "Downloads", "dream-linux-amd64")
	data, err := os.ReadFile(dreamBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	s.WriteFile(release, string(data))
	if err := os.Chmod(release, 0o755); err != nil {
		t.Fatal(err)
	}
	firstClaudeSession(t, s, a)
	for i := 0; i < 2; i++ {
		if r := s.Run(time.Minute, s.Project, release, "init", "claude"); r.Err != nil {
			t.Fatalf("init: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
		}
	}
	s.Setenv("DREAM_MIN_SESSIONS", "1")
	st := dreamStatus(s)
	s.WriteFile(filepath.Join(st.MemoryDir, "MEMORY.md"), "# Memory\n\n- deploys go through make ship\n- [Style](style.md) — how we write Go\n- deploys go through make ship\n")

	hookLog := filepath.Join(s.Home, ".local", "state", "dream", "hook.log")
	for i := 1; i <= 2; i++ {
		debug := filepath.Join(s.Home, "debug.log")
		os.Remove(debug)
		r := claudePrint(s, a, "hello", "--debug-file", debug)
		log := s.ReadFile(debug)
		runs := regexp.MustCompile(`SessionEnd:\S+ \[([^\]]*)\] (.*)`).FindAllStringSubmatch(log, -1)
		if len(runs) != 1 || !strings.HasPrefix(runs[0][1], release+" hook") || runs[0][2] != "completed with status 0" {
			t.Fatalf("session %d: Claude's SessionEnd hook runs %q, want one of %s completing with status 0", i, runs, release)
		}
		for _, bad := range []string{"cancelled", "timed out", "aborted"} {
			if strings.Contains(strings.ToLower(log), "hook") && strings.Contains(log, "SessionEnd") && strings.Contains(strings.ToLower(log), bad+" ") && strings.Contains(log, release) {
				t.Errorf("session %d: Claude's log says a hook was %s", i, bad)
			}
		}
		t.Logf("session %d: claude -p took %s", i, r.Took.Round(time.Millisecond))
	}
	// The first hooked session counts the session before it (its own is
	// excluded) and starts the dream; the next finds the time gate closed.
	Eventually(t, 30*time.Second, "hook.log says a dream started", func() bool {
		b, _ := os.ReadFile(hookLog)
		return strings.Contains(string(b), "gates open, dream started in the background")
	})
	b, _ := os.ReadFile(hookLog)
	took := regexp.MustCompile(`dream started in the background \(pid \d+\) for (.*) \(([^)]*)\)`).FindStringSubmatch(string(b))
	if took == nil || took[1] != st.MemoryDir {
		t.Fatalf("hook.log:\n%s", b)
	}
	if d, err := time.ParseDuration(took[2]); err != nil || d > 500*time.Millisecond {
		t.Errorf("the hook took %s to start the dream (Claude cancels it after about 1.5 s)", took[2])
	}
	t.Logf("hook.log:\n%s", b)
	Eventually(t, time.Minute, "the hook's dream completes", func() bool {
		var tasks []struct{ Status, MemoryDir string }
		r := s.Run(time.Minute, s.Project, dreamBinary(t), "tasks", "--host", "claude", "--json")
		_ = json.Unmarshal([]byte(r.Stdout), &tasks)
		for _, tk := range tasks {
			if tk.Status == "completed" {
				return true
			}
		}
		return false
	})
	if got := s.ReadFile(filepath.Join(st.MemoryDir, "MEMORY.md")); strings.Count(got, "make ship") != 1 {
		t.Errorf("the hook's dream did not consolidate the memory Claude loads: %q", got)
	}
}

// TestClaudeSessionsCounted: the sessions dream counts are the transcripts
// Claude wrote: every `claude -p` session is one, and --session excludes
// the current one.
func TestClaudeSessionsCounted(t *testing.T) {
	s, a := claudeSandbox(t, true)
	check(t, a, "the sessions dream counts are the files Claude wrote")
	for i := 0; i < 3; i++ {
		claudePrint(s, a, "hello")
	}
	st := dreamStatus(s)
	files := sessionFiles(t, st.SessionsDir)
	if len(files) != 3 || st.SessionsTouched != 3 {
		t.Fatalf("Claude wrote %v in %s; dream counts %d", files, st.SessionsDir, st.SessionsTouched)
	}
	if got := dreamStatus(s, "--session", files[0]).SessionsTouched; got != 2 {
		t.Errorf("with --session %s dream counts %d, want 2", files[0], got)
	}
}

// TestClaudeStillLoadsMemoryAfterDream: after a dream the memory Claude
// loads is the dreamed one, whole.
func TestClaudeStillLoadsMemoryAfterDream(t *testing.T) {
	s, a := claudeSandbox(t, true)
	check(t, a, "after a dream Claude still loads the memory")
	st := firstClaudeSession(t, s, a)
	index := filepath.Join(st.MemoryDir, "MEMORY.md")
	s.WriteFile(index, "# Memory\n\n- MARKER-AFTER-55d1: deploys go through make ship\n- [Style](style.md) — how we write Go\n- MARKER-AFTER-55d1: deploys go through make ship\n")
	s.WriteFile(filepath.Join(st.MemoryDir, "style.md"), "---\nname: style\ndescription: Go style\n---\n\n- wrap errors with context\n")
	var run struct {
		Status       string   `json:"status"`
		FilesTouched []string `json:"files_touched"`
	}
	s.DreamJSON(&run, "run", "--host", "claude", "--provider", "offline")
	if run.Status != "completed" || len(run.FilesTouched) == 0 {
		t.Fatalf("the offline dream: %+v", run)
	}
	after := s.ReadFile(index)
	claudePrint(s, a, "hello")
	turn := lastClaudeTurn(t, s)
	if !turn.Loaded || turn.Index != strings.TrimSpace(after) {
		t.Errorf("Claude loaded %q after the dream, the index is %q", turn.Index, after)
	}
	if strings.Count(turn.Index, "MARKER-AFTER-55d1") != 1 {
		t.Errorf("the duplicate is still loaded: %q", turn.Index)
	}
}

// TestClaudeInteractiveSession: the interactive UI, on a pty, as a person
// uses it: it loads the memory dream derives, its transcript is the
// session dream counts, and at exit it runs dream's hook with that
// session's id.
func TestClaudeInteractiveSession(t *testing.T) {
	s, a := claudeSandbox(t, true)
	check(t, a, "interactive UI: memory loaded, session counted, hook run at exit")
	st := firstClaudeSession(t, s, a)
	s.WriteFile(filepath.Join(st.MemoryDir, "MEMORY.md"), "- MARKER-TUI-3c9d: the index line\n")
	s.Dream("init", "claude")
	known := map[string]bool{}
	for _, id := range sessionFiles(t, st.SessionsDir) {
		known[id] = true
	}
	claudeTUI(t, s, a, true, "hello")
	turn := lastClaudeTurn(t, s)
	if turn.MemoryDir != st.MemoryDir || !strings.Contains(turn.Index, "MARKER-TUI-3c9d") {
		t.Errorf("the interactive session used %s, index %q; dream's dir is %s", turn.MemoryDir, turn.Index, st.MemoryDir)
	}
	var id string
	for _, f := range sessionFiles(t, st.SessionsDir) {
		if !known[f] {
			id = f
		}
	}
	if id == "" {
		t.Fatal("the interactive session wrote no transcript")
	}
	if got := dreamStatus(s).SessionsTouched; got != 2 {
		t.Errorf("dream counts %d sessions after one -p and one interactive session", got)
	}
	hookLog := filepath.Join(s.Home, ".local", "state", "dream", "hook.log")
	Eventually(t, 10*time.Second, "the hook logged the interactive session", func() bool {
		b, _ := os.ReadFile(hookLog)
		return strings.Contains(string(b), "event=SessionEnd session="+id+":")
	})
}
