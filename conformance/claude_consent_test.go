package conformance

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaudeHookSpendsNoInheritedKey: Claude Code passes its whole
// environment to its hooks, ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
// among them. With `dream init claude` installed and no consent in dream's
// own settings, the dream the hook starts runs offline: not one request
// of dream's reaches the model server Claude talks to, the task says why,
// and `dream status` says how to consent.
func TestClaudeHookSpendsNoInheritedKey(t *testing.T) {
	s, a := claudeSandbox(t, true)
	check(t, a, "the hook's dream does not spend the key Claude passes it")
	s.Unsetenv("DREAM_PROVIDER") // only what Claude itself passes on
	st := firstClaudeSession(t, s, a)
	if r := s.Run(time.Minute, s.Project, dreamBinary(t), "init", "claude"); r.Err != nil {
		t.Fatalf("init: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	s.Setenv("DREAM_MIN_SESSIONS", "1")
	s.WriteFile(filepath.Join(st.MemoryDir, "MEMORY.md"), "# Memory\n\n- deploys go through make ship\n- deploys go through make ship\n")
	claudePrint(s, a, "hello")

	var done struct{ Status, Provider, ProviderWhy string }
	Eventually(t, time.Minute, "the hook's dream completes", func() bool {
		var tasks []struct {
			Status      string `json:"status"`
			Provider    string `json:"provider"`
			ProviderWhy string `json:"provider_why"`
		}
		r := s.Run(time.Minute, s.Project, dreamBinary(t), "tasks", "--host", "claude", "--json")
		_ = json.Unmarshal([]byte(r.Stdout), &tasks)
		for _, tk := range tasks {
			if tk.Status == "completed" {
				done.Status, done.Provider, done.ProviderWhy = tk.Status, tk.Provider, tk.ProviderWhy
				return true
			}
		}
		return false
	})
	if done.Provider != "offline" || !strings.Contains(done.ProviderWhy, "ANTHROPIC_API_KEY") {
		t.Errorf("the hook's dream ran with provider %q (%s); want offline, saying why the key was not spent", done.Provider, done.ProviderWhy)
	}
	for _, r := range s.Fake.Requests() {
		if strings.Contains(string(r.Body), "You are dream, a memory consolidation agent") {
			t.Errorf("a request of dream's reached the model server Claude talks to: %.200s", r.Body)
		}
	}
	if got := s.ReadFile(filepath.Join(st.MemoryDir, "MEMORY.md")); strings.Count(got, "make ship") != 1 {
		t.Errorf("the offline dream did not consolidate the memory: %q", got)
	}
	status := s.Dream("status", "--host", "claude")
	if !strings.Contains(status, "dream init claude --model-dreams") {
		t.Errorf("status does not say how to give the key to dream:\n%s", status)
	}
}
