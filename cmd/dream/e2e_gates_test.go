package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
)

func TestStatusJSONFields(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.dream(nil, append([]string{"status", "--json"}, w.locFlags()...)...)
	if r.code != 0 {
		t.Fatalf("status failed:\n%s", r)
	}
	raw := decodeJSON[map[string]any](t, r)
	for _, k := range []string{"enabled", "last_consolidated_at", "sessions_touched_since", "min_hours", "min_sessions", "lock", "next"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("status --json lacks %q", k)
		}
	}
	if raw["last_consolidated_at"] != nil {
		t.Errorf("never consolidated: last_consolidated_at = %v, want null", raw["last_consolidated_at"])
	}
	lk, _ := raw["lock"].(map[string]any)
	if _, ok := lk["held"]; !ok {
		t.Errorf("lock lacks held: %v", lk)
	}
	if _, ok := lk["pid"]; !ok {
		t.Errorf("lock lacks pid: %v", lk)
	}
	if raw["next"] != "ready" || raw["sessions_touched_since"] != float64(6) {
		t.Errorf("next %v sessions %v, want ready and 6", raw["next"], raw["sessions_touched_since"])
	}
}

func TestMaybeReportsClosedGateAndExitsZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(w *world)
		args  []string
		env   []string
		gate  string
	}{
		{"disabled by env", nil, nil, []string{"DREAM_ENABLED=false"}, "enabled"},
		{"time gate", func(w *world) {
			w.write(w.mem, ".consolidate-lock", "")
		}, nil, nil, "time"},
		{"sessions gate by flag", nil, []string{"--min-sessions", "7"}, nil, "sessions"},
		{"current session excluded", func(w *world) {
			os.Remove(filepath.Join(w.sessions, "s5.jsonl"))
			w.write(w.sessions, "abc_cur.jsonl", "{}\n")
		}, []string{"--session", "cur", "--min-sessions", "6"}, nil, "sessions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			if tt.setup != nil {
				tt.setup(w)
			}
			before := snapshot(t, w.mem)
			args := append(append([]string{"maybe", "--json"}, w.locFlags()...), tt.args...)
			r := w.dream(append([]string{"DREAM_PROVIDER=offline"}, tt.env...), args...)
			if r.code != 0 {
				t.Fatalf("maybe with a closed gate must exit 0:\n%s", r)
			}
			res := decodeJSON[dream.MaybeResult](t, r)
			if res.Gate != tt.gate || res.Report != nil {
				t.Fatalf("gate %q report %v, want %q and no dream", res.Gate, res.Report, tt.gate)
			}
			after := snapshot(t, w.mem)
			if len(after) != len(before) {
				t.Fatal("a closed gate changed the memory")
			}
		})
	}
}

func TestMaybeThrottlePersistsAcrossProcesses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	args := append([]string{"maybe", "--json", "--min-sessions", "50"}, w.locFlags()...)
	first := decodeJSON[dream.MaybeResult](t, w.dream([]string{"DREAM_PROVIDER=offline"}, args...))
	if first.Gate != "sessions" {
		t.Fatalf("first maybe: gate %q, want sessions", first.Gate)
	}
	second := decodeJSON[dream.MaybeResult](t, w.dream([]string{"DREAM_PROVIDER=offline"}, args...))
	if second.Gate != "throttle" {
		t.Fatalf("second maybe within 10 minutes: gate %q, want throttle", second.Gate)
	}
}

func TestMaybeRunsWhenEveryGateOpens(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(w.mem, "dup.md", "---\nname: dup\ndescription: dup\ntype: project\n---\n\nRun `make all` to build.\n")
	r := w.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"maybe", "--json"}, w.locFlags()...)...)
	if r.code != 0 {
		t.Fatalf("maybe failed:\n%s", r)
	}
	rep := decodeJSON[dream.Report](t, r)
	if rep.Status != "completed" || rep.TaskID == "" {
		t.Fatalf("maybe with every gate open did not dream: %+v", rep)
	}
	// Now the time gate is closed.
	st := decodeJSON[dream.StatusReport](t, w.dream(nil, append([]string{"status", "--json"}, w.locFlags()...)...))
	if st.Next != "time" || st.LastConsolidatedAt == nil {
		t.Fatalf("after a dream: next %q last %v", st.Next, st.LastConsolidatedAt)
	}
	// The telemetry saw it fire and complete.
	stats := decodeJSON[struct {
		Fired, Completed, Failed int
	}](t, w.dream(nil, append([]string{"stats", "--json"}, w.locFlags()...)...))
	if stats.Fired != 1 || stats.Completed != 1 || stats.Failed != 0 {
		t.Fatalf("stats after one dream: %+v", stats)
	}
}

func TestHostClaudeLayout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	home := filepath.Join(w.root, "home")
	// Claude Code keeps a project's transcripts under ~/.claude/projects/<path with
	// every non-alphanumeric character as '-'> and its memory in memory/ there.
	slug := strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, w.repo)
	proj := filepath.Join(home, ".claude", "projects", slug)
	w.write(filepath.Join(proj, "memory"), "MEMORY.md", "- [A](a.md) — a\n")
	for i := 0; i < 5; i++ {
		// Named by session UUID: Claude Code counts no other transcript.
		w.write(proj, fmt.Sprintf("%08x-0000-4000-8000-%012x.jsonl", i, i), "{}\n")
	}
	r := w.dream(nil, "status", "--json", "--host", "claude", "--repo", w.repo, "--state-dir", w.state)
	if r.code != 0 {
		t.Fatalf("status --host claude:\n%s", r)
	}
	st := decodeJSON[dream.StatusReport](t, r)
	if st.MemoryDir != filepath.Join(proj, "memory") || st.SessionsTouchedSince != 5 || st.Next != "ready" {
		t.Fatalf("claude layout: memory %s sessions %d next %s", st.MemoryDir, st.SessionsTouchedSince, st.Next)
	}
}

func TestRunLockHeldExitsThree(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// A live foreign holder (our own test process) that took the lock just now.
	w.write(w.mem, ".consolidate-lock", strconv.Itoa(os.Getpid()))
	srvURL := "http://127.0.0.1:1" // nothing may be sent anywhere
	r := w.dream([]string{"DREAM_PROVIDER=anthropic", "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + srvURL}, append([]string{"run", "--json"}, w.locFlags()...)...)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", r.code, r)
	}
	body, _ := os.ReadFile(filepath.Join(w.mem, ".consolidate-lock"))
	if string(body) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("the holder's lock body changed to %q", body)
	}
	st := decodeJSON[dream.StatusReport](t, w.dream(nil, append([]string{"status", "--json"}, w.locFlags()...)...))
	if !st.Lock.Held || st.Lock.PID != os.Getpid() {
		t.Fatalf("status lock %+v", st.Lock)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, args := range [][]string{
		{"nonsense"},
		{"run", "--bogus-flag"},
		{"status"}, // no memory dir anywhere
		{"undo"},   // missing id
		{"status", "--memory-dir", w.mem, "stray-argument"},
		{"run", "--memory-dir", filepath.Join(w.root, "missing")},
		{"run", "--memory-dir", w.mem, "--provider", "nope"},
	} {
		r := w.dream(nil, args...)
		if r.code != 2 {
			t.Errorf("dream %v: exit %d, want 2\n%s", args, r.code, r)
		}
		if strings.TrimSpace(r.stderr) == "" {
			t.Errorf("dream %v: no message on stderr", args)
		}
	}
}

func TestBadSettingValueWarnsAndUsesDefault(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.dream([]string{"DREAM_MIN_HOURS=-3"}, append([]string{"config", "--json"}, w.locFlags()...)...)
	if r.code != 0 {
		t.Fatalf("config failed:\n%s", r)
	}
	if !strings.Contains(r.stderr, "DREAM_MIN_HOURS") {
		t.Errorf("the warning does not name the source:\n%s", r.stderr)
	}
	rows := decodeJSON[[]struct{ Key, Value, Source string }](t, r)
	for _, row := range rows {
		if row.Key == "min_hours" && row.Value != "24" {
			t.Errorf("min_hours = %q, want the default 24", row.Value)
		}
	}
}

func TestFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.dream(nil, append([]string{"show", "no-such-dream"}, w.locFlags()...)...)
	if r.code == 2 {
		t.Fatalf("flags after the argument were not parsed:\n%s", r)
	}
	if !strings.Contains(r.stderr, "no-such-dream") {
		t.Errorf("the error does not name the id:\n%s", r)
	}
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.dream(nil, "help")
	for _, c := range []string{"run", "maybe", "status", "tasks", "kill", "log", "show", "undo", "demo", "config"} {
		if !strings.Contains(r.stdout, "  "+c) {
			t.Errorf("help does not list %q", c)
		}
	}
	if r := w.dream(nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "dream ") {
		t.Errorf("version: %s", r)
	}
	if r := w.dream(nil, "run", "--help"); r.code != 0 || !strings.Contains(r.stdout, "--review") {
		t.Errorf("run --help: %s", r)
	}
}

var _ = time.Second

func TestHookPayloadSetsSessionAndRepo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Six sessions exist; the hook's own session is one of them, so only
	// five count and --min-sessions 6 keeps the gate closed. The time gate
	// is open (never consolidated), so the binary's early start reads the
	// payload and hands it to the full command (early.Stdin), which must
	// see it whole.
	payload := fmt.Sprintf(`{"session_id":"s5","cwd":%q,"hook_event_name":"Stop"}`, w.repo)
	cmd := exec.Command(binPath, append([]string{"maybe", "--json", "--hook", "--min-sessions", "6"}, "--memory-dir", w.mem, "--sessions-dir", w.sessions, "--state-dir", w.state)...)
	cmd.Env = append(append([]string{}, w.env...), "DREAM_PROVIDER=offline")
	cmd.Dir = w.root // not the repo: the payload's cwd must be used
	cmd.Stdin = strings.NewReader(payload)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("maybe --hook: %v\n%s", err, out)
	}
	res := decodeJSON[dream.MaybeResult](t, result{stdout: string(out)})
	if res.Gate != "sessions" || !strings.Contains(res.Detail, "5 session(s)") {
		t.Fatalf("gate %q detail %q: want the hook's session excluded (5 of 6)", res.Gate, res.Detail)
	}
	bad := exec.Command(binPath, "maybe", "--hook", "--memory-dir", w.mem)
	bad.Env = w.env
	bad.Stdin = strings.NewReader("not json")
	if err := bad.Run(); err == nil || bad.ProcessState.ExitCode() != 2 {
		t.Fatalf("a garbage hook payload: err %v, want exit 2", err)
	}
}
