package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/settings"
)

// A daemon dream on a nanobot workspace (as discovery finds it) is
// nanobot's history dream behind nanobot's edit guard: the scripted
// model's rewrite of memory/history.jsonl does not land, its USER.md edit
// does, and the dream cursor advances.
func TestDaemonNanobotDreamKeepsHistory(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, ".nanobot", "workspace")
	writeFile(t, filepath.Join(ws, "SOUL.md"), "# Soul\n\n## Interaction\n\n1. Answer first, explain after.\n")
	writeFile(t, filepath.Join(ws, "USER.md"), "# User\n\n## Preferences\n\n- Replies in Chinese, short\n")
	writeFile(t, filepath.Join(ws, "memory", "MEMORY.md"), "# Project memory\n\n## Goals\n\n- Ship the 广场照明 controller by June\n")
	var hist strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&hist, `{"cursor": %d, "timestamp": "2026-05-0%d 09:00", "content": "- [durable] 用户把灯光策略改为 19 点开启", "session_key": "telegram:8812"}`+"\n", i, i)
	}
	writeFile(t, filepath.Join(ws, "memory", "history.jsonl"), hist.String())
	sessions := filepath.Join(home, ".nanobot", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "memory/history.jsonl", "content": "{}\n"}}}},
		llmtest.Turn{Calls: []llmtest.Call{
			{Name: "read", Input: map[string]any{"file_path": "USER.md"}},
			{Name: "edit", Input: map[string]any{"file_path": "USER.md", "old_string": "- Replies in Chinese, short\n", "new_string": "- Replies in Chinese, short\n- Lamps switch on at 19:00\n"}},
		}},
		llmtest.Turn{Text: "USER.md updated."},
	)
	defer srv.Close()
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.Provider, s.BaseURL = "anthropic", srv.URL
	choice, err := provider.Choose(s, func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return "test-key"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	h := startDaemon(t, root, nil, 1, 300*time.Millisecond, nil, func(c *Config) {
		c.Runner, c.Provider, c.Backend = nil, "", choice
		c.Detect = true // nanobot's workspace is found as `dream daemon` finds it
	})
	for i := 0; i < 3; i++ {
		writeFile(t, filepath.Join(sessions, fmt.Sprintf("telegram_88%d.jsonl", i)), `{"role":"user","content":"把灯改成 19 点"}`+"\n")
	}
	waitUntil(t, 60*time.Second, "a dream on the workspace", func() bool {
		for _, p := range h.d.Status().Projects {
			if p.MemoryDir == ws && p.LastDream != nil {
				return true
			}
		}
		return false
	})
	for _, p := range h.d.Status().Projects {
		if p.MemoryDir == ws && p.LastDream.Status != dream.StatusCompleted {
			t.Fatalf("dream: %+v", p.LastDream)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "memory", "history.jsonl")); string(b) != hist.String() {
		t.Fatalf("the daemon's dream rewrote nanobot's history:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "USER.md")); !strings.Contains(string(b), "19:00") {
		t.Error("the USER.md edit did not land")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "memory", ".dream_cursor")); string(b) != "3" {
		t.Errorf(".dream_cursor = %q: the daemon did not run nanobot's history dream", b)
	}
}
