package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaudeProjectMemoryDirFollowsTrust: autoMemoryDirectory in the
// project's .claude/settings.json, which Claude Code follows in a trusted
// folder (every `claude -p` session, and the interactive UI once its
// trust dialog is accepted), and which dream follows once ~/.claude.json
// records the trust — in status, in the hook and in the dream. Before
// that, dream says what it does not follow and why; Claude's interactive
// UI, declined, uses nothing.
func TestClaudeProjectMemoryDirFollowsTrust(t *testing.T) {
	s, a := claudeSandbox(t, false)
	check(t, a, "project autoMemoryDirectory followed when trusted, not when untrusted")
	team := filepath.Join(s.Home, "team-memory")
	s.WriteJSON(filepath.Join(s.Project, ".claude", "settings.json"), map[string]any{"autoMemoryDirectory": team})
	s.WriteFile(filepath.Join(team, "MEMORY.md"), "# Memory\n\n- MARKER-TEAM-0b7e: deploys go through make ship\n- [Style](style.md) — Go style\n- MARKER-TEAM-0b7e: deploys go through make ship\n")
	s.Dream("init", "claude")
	s.Setenv("DREAM_MIN_SESSIONS", "1")
	hookLog := filepath.Join(s.Home, ".local", "state", "dream", "hook.log")

	// Untrusted. dream does not follow the project's value, and says so.
	r := s.Run(time.Minute, s.Project, dreamBinary(t), "doctor", "--host", "claude")
	if !strings.Contains(r.Stdout, "WARN  agent dir") || !strings.Contains(r.Stdout, team) || !strings.Contains(r.Stdout, "claude -p") {
		t.Errorf("doctor in an untrusted folder does not say Claude may use %s:\n%s", team, r.Stdout)
	}
	// A `claude -p` session trusts the folder: Claude uses the project's dir.
	claudePrint(s, a, "hello")
	turn := lastClaudeTurn(t, s)
	if turn.MemoryDir != team || !strings.Contains(turn.Index, "MARKER-TEAM-0b7e") {
		t.Fatalf("claude -p used %s (index %q), want the project's %s", turn.MemoryDir, turn.Index, team)
	}
	r = s.Run(time.Minute, s.Project, dreamBinary(t), "status", "--host", "claude")
	if r.Err == nil || !strings.Contains(r.Stderr, team+" is not followed") || !strings.Contains(r.Stderr, "trust") {
		t.Errorf("status in an untrusted folder: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	Eventually(t, 10*time.Second, "the -p session's hook logged", func() bool {
		b, _ := os.ReadFile(hookLog)
		return len(b) > 0
	})
	if b, _ := os.ReadFile(hookLog); strings.Contains(string(b), "for "+team) {
		t.Errorf("the hook dreamed %s in an untrusted folder:\n%s", team, b)
	}

	// The interactive UI asks first; declined, it exits having sent
	// nothing and recorded nothing.
	before := len(s.Fake.Requests())
	claudeTUI(t, s, a, false, "")
	if n := len(s.Fake.Requests()); n != before {
		t.Errorf("Claude sent %d requests after its trust dialog was declined", n-before)
	}
	if trusted(t, s) {
		t.Fatal("a declined trust dialog was recorded as trust")
	}

	// Accepted: Claude records the trust and uses the project's dir; so
	// does dream, in status, in the hook and in the dream it starts.
	claudeTUI(t, s, a, true, "hello")
	if !trusted(t, s) {
		t.Fatal("Claude did not record the accepted trust in ~/.claude.json")
	}
	if turn := lastClaudeTurn(t, s); turn.MemoryDir != team {
		t.Errorf("the trusted interactive session used %s, want %s", turn.MemoryDir, team)
	}
	st := dreamStatus(s)
	if st.MemoryDir != team {
		t.Errorf("dream status in the trusted folder: memory dir %s, want %s", st.MemoryDir, team)
	}
	var from string
	for _, src := range st.Layout.Sources {
		if src.What == "memory dir" {
			from = src.From
		}
	}
	if !strings.Contains(from, "project settings") || !strings.Contains(from, "trusted") {
		t.Errorf("status gives the memory dir's source as %q", from)
	}
	Eventually(t, 30*time.Second, "the interactive session's hook started a dream of "+team, func() bool {
		b, _ := os.ReadFile(hookLog)
		return strings.Contains(string(b), "dream started in the background") && strings.Contains(string(b), "for "+team+" (")
	})
	Eventually(t, time.Minute, "the hook's dream of "+team+" completes", func() bool {
		var tasks []struct {
			Status    string `json:"status"`
			MemoryDir string `json:"memory_dir"`
		}
		r := s.Run(time.Minute, s.Project, dreamBinary(t), "tasks", "--host", "claude", "--json")
		_ = json.Unmarshal([]byte(r.Stdout), &tasks)
		for _, tk := range tasks {
			if tk.Status == "completed" && tk.MemoryDir == team {
				return true
			}
		}
		return false
	})
	if got := s.ReadFile(filepath.Join(team, "MEMORY.md")); strings.Count(got, "MARKER-TEAM-0b7e") != 1 {
		t.Errorf("the dream did not consolidate the project's memory dir: %q", got)
	}
}

// trusted reports whether ~/.claude.json records the project as trusted.
func trusted(t *testing.T, s *Sandbox) bool {
	t.Helper()
	var cfg struct {
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(s.ReadFile(filepath.Join(s.Home, ".claude.json"))), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Projects[s.Project].HasTrustDialogAccepted
}
