package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/settings"
)

// connect serves opts over the in-memory transport and returns the client.
func connect(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func noEnv(string) (string, bool) { return "", false }

// newNanobotWorkspace lays out a nanobot workspace under home as nanobot
// does (nanobot/agent/memory.py MemoryStore): SOUL.md, USER.md,
// memory/MEMORY.md and the append-only memory/history.jsonl.
func newNanobotWorkspace(t *testing.T, home string, entries int) (ws, history string) {
	t.Helper()
	ws = filepath.Join(home, ".nanobot", "workspace")
	write(t, filepath.Join(ws, "SOUL.md"), "# Soul\n\n## Interaction\n\n1. Answer first, explain after.\n2. Ask before running anything destructive.\n")
	write(t, filepath.Join(ws, "USER.md"), "# User\n\n## Preferences\n\n- Replies in Chinese, short\n")
	write(t, filepath.Join(ws, "memory", "MEMORY.md"), "# Project memory\n\n## Goals\n\n- Ship the 广场照明 controller by June\n")
	var b strings.Builder
	for i := 1; i <= entries; i++ {
		fmt.Fprintf(&b, `{"cursor": %d, "timestamp": "2026-05-%02d 09:00", "content": "- [durable] 用户把灯光策略改为 %d 点开启", "session_key": "telegram:8812"}`+"\n", i, i, 18+i%3)
	}
	history = b.String()
	write(t, filepath.Join(ws, "memory", "history.jsonl"), history)
	write(t, filepath.Join(ws, ".nanobot", "workspace-id"), "5f0c2b8e9a1d4c7b8e6f3a2d1c0b9a8e\n")
	return ws, history
}

// anthropicChoice is the provider choice of a scripted model server.
func anthropicChoice(t *testing.T, url string) provider.Choice {
	t.Helper()
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.Provider, s.BaseURL = "anthropic", url
	c, err := provider.Choose(s, func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return "test-key"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An MCP dream on a nanobot workspace is nanobot's history dream behind
// nanobot's edit guard: a model that rewrites memory/history.jsonl, the
// workspace id or a session does not land any of it, while its USER.md
// edit does and the dream cursor advances.
func TestMCPNanobotDreamKeepsHistoryAndMarkers(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws, history := newNanobotWorkspace(t, home, 3)
	state := filepath.Join(root, "state")
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "memory/history.jsonl", "content": "{}\n"}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": ".nanobot/workspace-id", "content": "0000\n"}}}},
		llmtest.Turn{Calls: []llmtest.Call{
			{Name: "read", Input: map[string]any{"file_path": "USER.md"}},
			{Name: "edit", Input: map[string]any{"file_path": "USER.md", "old_string": "- Replies in Chinese, short\n", "new_string": "- Replies in Chinese, short\n- Lamps switch on at 19:00\n"}},
		}},
		llmtest.Turn{Text: "USER.md updated; the history is nanobot's."},
	)
	defer srv.Close()
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = state
	cs := connect(t, Options{Base: dream.Config{MemoryDir: ws, StateDir: state, Settings: s.Dream}, Host: nanobot.HostName,
		Backend: anthropicChoice(t, srv.URL), Home: home, Env: noEnv, Version: "test"})
	var out RunOutput
	call(t, cs, "dream_run", map[string]any{"apply": true}, &out, false)
	if out.Status != dream.StatusCompleted {
		t.Fatalf("dream_run: %+v", out)
	}
	if got := readFile(t, filepath.Join(ws, "memory", "history.jsonl")); got != history {
		t.Fatalf("the dream rewrote nanobot's history:\n%s", got)
	}
	if got := readFile(t, filepath.Join(ws, ".nanobot", "workspace-id")); !strings.HasPrefix(got, "5f0c2b8e") {
		t.Fatalf("the dream rewrote the workspace id: %q", got)
	}
	if !strings.Contains(readFile(t, filepath.Join(ws, "USER.md")), "19:00") {
		t.Error("the USER.md edit did not land")
	}
	if got := readFile(t, filepath.Join(ws, "memory", ".dream_cursor")); got != "3" {
		t.Errorf(".dream_cursor = %q, want 3: the nanobot runner did not run", got)
	}
}

// The edit guard itself, under any runner: a dream whose staging writes the
// history and breaks a Codex MEMORY.md block header lands neither.
func TestMCPHostGuardRefusesForbiddenEdits(t *testing.T) {
	codexMem := "---\nrollout_summary_files:\n  - 2026-11-28T10-40-02-retries.md (success, cwd=/home/dev/src/shop-api, updated_at=2026-11-28T11:02:13Z)\ndescription: Payment retries in shop-api\nkeywords: ChargeCard, retry\n---\n\n- ChargeCard retries with exponential backoff (100 ms, 400 ms, 1.6 s).\n- 用户偏好：提交信息用英文。\n"
	for _, tc := range []struct {
		name, host, rel, forbidden string
		setup                      func(t *testing.T, home string) string
	}{
		{name: "nanobot history", host: nanobot.HostName, rel: "memory/history.jsonl", forbidden: "{}\n",
			setup: func(t *testing.T, home string) string { ws, _ := newNanobotWorkspace(t, home, 2); return ws }},
		{name: "codex block header", host: "codex", rel: "MEMORY.md",
			forbidden: strings.Replace(codexMem, "description: Payment retries in shop-api\n", "description: Payments\n", 1),
			setup: func(t *testing.T, home string) string {
				mem := filepath.Join(home, ".codex", "memories")
				write(t, filepath.Join(mem, "MEMORY.md"), codexMem)
				return mem
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, "home")
			mem := tc.setup(t, home)
			before := readFile(t, filepath.Join(mem, filepath.FromSlash(tc.rel)))
			state := filepath.Join(root, "state")
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.StateDir = state
			runner := dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
				p := filepath.Join(job.MemoryDir, filepath.FromSlash(tc.rel))
				if err := os.WriteFile(p, []byte(tc.forbidden), 0o644); err != nil {
					return dream.Outcome{}, err
				}
				return dream.Outcome{FilesTouched: []string{tc.rel}, Summary: "rewrote " + tc.rel}, nil
			})
			cs := connect(t, Options{Base: dream.Config{MemoryDir: mem, StateDir: state, Settings: s.Dream, Runner: runner, Provider: "test"},
				Host: tc.host, Backend: provider.Choice{Name: provider.Offline}, Home: home, Env: noEnv, Version: "test"})
			call(t, cs, "dream_run", map[string]any{"apply": true}, nil, false)
			if got := readFile(t, filepath.Join(mem, filepath.FromSlash(tc.rel))); got != before {
				t.Fatalf("%s landed past the %s guard:\n%s", tc.rel, tc.host, got)
			}
		})
	}
}

// TestMCPOtherMemoryDirKeepsItsHostGuard: a call naming another memory dir
// than the server's (one dreamt before) is still guarded by the agent whose
// dir it is. Before, only a nanobot workspace was recognised there, so a
// model could rewrite a Codex block header by naming ~/.codex/memories.
func TestMCPOtherMemoryDirKeepsItsHostGuard(t *testing.T) {
	codexMem := "---\nrollout_summary_files:\n  - 2026-11-28T10-40-02-retries.md (success, cwd=/home/dev/src/shop-api, updated_at=2026-11-28T11:02:13Z)\ndescription: Payment retries in shop-api\nkeywords: ChargeCard, retry\n---\n\n- ChargeCard retries with exponential backoff (100 ms, 400 ms, 1.6 s).\n"
	root := t.TempDir()
	home := filepath.Join(root, "home")
	codex := filepath.Join(home, ".codex", "memories")
	write(t, filepath.Join(codex, "MEMORY.md"), codexMem)
	own := filepath.Join(root, "project", "memory")
	write(t, filepath.Join(own, "MEMORY.md"), "# Memory\n\n- Run `make test` before pushing.\n")
	state := filepath.Join(root, "state")
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = state
	// A plain dream on the Codex dir puts it in the task registry, which is
	// what lets a call name it.
	d, err := dream.New(dream.Config{MemoryDir: codex, StateDir: state, Settings: s.Dream, Runner: dream.RunnerFunc(func(context.Context, dream.Job) (dream.Outcome, error) {
		return dream.Outcome{}, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(context.Background(), dream.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	forbidden := strings.Replace(codexMem, "description: Payment retries in shop-api\n", "description: Payments\n", 1)
	runner := dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
		if err := os.WriteFile(filepath.Join(job.MemoryDir, "MEMORY.md"), []byte(forbidden), 0o644); err != nil {
			return dream.Outcome{}, err
		}
		return dream.Outcome{FilesTouched: []string{"MEMORY.md"}, Summary: "rewrote the block header"}, nil
	})
	cs := connect(t, Options{Base: dream.Config{MemoryDir: own, StateDir: state, Settings: s.Dream, Runner: runner, Provider: "test"},
		Backend: provider.Choice{Name: provider.Offline}, Home: home, Env: noEnv, Version: "test"})
	call(t, cs, "dream_run", map[string]any{"apply": true, "memory_dir": codex}, nil, false)
	if got := readFile(t, filepath.Join(codex, "MEMORY.md")); got != codexMem {
		t.Fatalf("MEMORY.md landed past the codex guard:\n%s", got)
	}
}
