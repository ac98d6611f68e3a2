package hostcfg_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/hostcfg"
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
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = state
	if _, err := hostcfg.For(host.Project{Host: "dir", MemoryDir: mem, RepoDir: filepath.Dir(mem)}, nil,
		dream.Config{StateDir: state, Settings: s.Dream, Runner: dream.RunnerFunc(func(context.Context, dream.Job) (dream.Outcome, error) { return dream.Outcome{}, nil })},
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
