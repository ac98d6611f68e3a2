package hostcfg_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/settings"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/host"
)

// TestOtherHostClearsANarrowedScope: a dir once dreamt as a nanobot
// workspace (by mistake, or before it became another agent's memory) is
// recorded whole again as soon as another agent's layout names it; before,
// the nanobot scope stayed, and every other file's changes landed unrecorded.
func TestOtherHostClearsANarrowedScope(t *testing.T) {
	root := t.TempDir()
	mem, state := filepath.Join(root, "notes", "memory"), filepath.Join(root, "state")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := audit.SetScope(state, mem, []string{"SOUL.md", "memory/MEMORY.md"}); err != nil {
		t.Fatal(err)
	}
	s := settings.DreamDefaults()
	if _, err := hostcfg.For(host.Project{Host: "dir", MemoryDir: mem, RepoDir: filepath.Dir(mem)}, nil,
		dream.Config{StateDir: state, Settings: s, Runner: dream.RunnerFunc(func(context.Context, dream.Job) (dream.Outcome, error) { return dream.Outcome{}, nil })},
		root, func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	h, err := audit.Open(context.Background(), state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !h.InScope("topics/billing.md") {
		t.Fatal("the nanobot scope still narrows a dir another host's layout names")
	}
}

// TestForKeepsTheCallersHooks: a caller's Disabled stays (the layout
// fills it only when the caller left it empty), and a caller's AfterLand
// runs after nanobot's follow-up instead of being replaced by it.
func TestForKeepsTheCallersHooks(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, ".nanobot", "workspace")
	for _, p := range []string{filepath.Join(ws, "memory", "MEMORY.md"), filepath.Join(ws, "SOUL.md")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var calls []string
	base := dream.Config{StateDir: filepath.Join(root, "state"), Settings: settings.DreamDefaults(), Disabled: "the host said no",
		Runner:    dream.RunnerFunc(func(context.Context, dream.Job) (dream.Outcome, error) { return dream.Outcome{}, nil }),
		AfterLand: func(context.Context, string) error { calls = append(calls, "caller"); return nil }}
	cfg, err := hostcfg.For(host.Project{Host: nanobot.HostName, MemoryDir: ws}, nil, base, home, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Disabled != "the host said no" {
		t.Errorf("Disabled = %q", cfg.Disabled)
	}
	if cfg.Host != nanobot.HostName {
		t.Errorf("Host = %q, want the project's", cfg.Host)
	}
	if err := cfg.AfterLand(context.Background(), ws); err != nil {
		t.Fatal(err) // no git store: nanobot's follow-up has nothing to commit
	}
	if len(calls) != 1 {
		t.Errorf("the caller's AfterLand ran %d times, want once after nanobot's", len(calls))
	}
}
