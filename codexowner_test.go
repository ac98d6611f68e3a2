package dream_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/settings"
)

// TestCodexMemoryOwner: a Codex memory that Codex consolidates itself
// (its memories feature on) is left alone until codex_memory_owner says
// whose it is: the enabled gate is closed with the reason and a manual
// run is refused before the lock, so not even .consolidate-lock appears
// in Codex's workspace. "dream" hands it over; "codex" keeps dream out
// even with the feature off.
func TestCodexMemoryOwner(t *testing.T) {
	tests := []struct {
		name, config, owner string
		dreams              bool
		reason              string
	}{
		{"feature on, owner unset", "[features]\nmemories = true\n", "", false, "until you choose who owns it"},
		{"feature on, owner dream", "[features]\nmemories = true\n", "dream", true, ""},
		{"feature on, owner codex", "[features]\nmemories = true\n", "codex", false, "codex_memory_owner = codex"},
		{"feature off", "", "", true, ""},
		{"feature off, owner codex", "", "codex", false, "codex_memory_owner = codex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			codex := filepath.Join(home, ".codex")
			mem := filepath.Join(codex, "memories")
			if err := os.MkdirAll(mem, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(mem, "memory_summary.md"), []byte("# Summary\n\n- a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.config != "" {
				if err := os.WriteFile(filepath.Join(codex, "config.toml"), []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.StateDir = filepath.Join(home, "state")
			s.CodexMemoryOwner = tt.owner
			ran := false
			runner := dream.RunnerFunc(func(context.Context, dream.Job) (dream.Outcome, error) {
				ran = true
				return dream.Outcome{}, nil
			})
			cfg, err := hostcfg.For(host.Project{Host: "codex", MemoryDir: mem, SessionsDir: filepath.Join(codex, "sessions")}, nil,
				dream.Config{StateDir: s.StateDir, Settings: s.Dream, Runner: runner, Provider: "test"}, home, func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			d, err := dream.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			st, err := d.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Enabled != tt.dreams || st.Gates[0].Open != tt.dreams || !strings.Contains(st.Gates[0].Detail, tt.reason) {
				t.Errorf("status: enabled %v, gate %+v; want open=%v saying %q", st.Enabled, st.Gates[0], tt.dreams, tt.reason)
			}
			_, err = d.Run(ctx, dream.RunOptions{})
			if (err == nil) != tt.dreams || ran != tt.dreams {
				t.Errorf("run: %v, ran %v; want it to dream = %v", err, ran, tt.dreams)
			}
			if !tt.dreams {
				if _, err := os.Stat(filepath.Join(mem, ".consolidate-lock")); !os.IsNotExist(err) {
					t.Errorf("a refused dream left .consolidate-lock in Codex's memories/ (%v)", err)
				}
			}
		})
	}
}
