package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// dream_apply does not lift a policy the model did not set: a dream the
// loss guard held, and any staged dream while the user's settings say
// review = true, are refused with a tool error naming `dream apply ID`;
// the memory is unchanged and the dream stays staged for the user (the
// Dreamer's own Apply, what `dream apply` runs, still lands it).
func TestMCPApplyRefusesHeldAndReviewPolicy(t *testing.T) {
	// Wiping build.md down to its heading loses far more than max_loss.
	lossy := dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
		err := os.WriteFile(filepath.Join(job.MemoryDir, "build.md"), []byte("---\nname: build\ndescription: how the project builds and ships\ntype: project\n---\n\n# Build\n"), 0o644)
		return dream.Outcome{FilesTouched: []string{"build.md"}, Summary: "tidied build.md"}, err
	})
	for _, tc := range []struct {
		name       string
		review     bool
		runner     dream.Runner
		apply      bool // dream_run's apply
		wantReason string
		wantErr    string
	}{
		{name: "loss guard hold", runner: lossy, apply: true, wantReason: dream.ParkLossGuard, wantErr: "held for the user's review"},
		{name: "review = true", review: true, runner: &runner.Offline{}, apply: true, wantReason: dream.ParkReviewRequested, wantErr: "review = true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
			for name, content := range map[string]string{"MEMORY.md": memIndex, "build.md": memBuild, "prefs.md": memPrefs} {
				write(t, filepath.Join(mem, name), content)
			}
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.StateDir, s.Review = state, tc.review
			base := dream.Config{MemoryDir: mem, StateDir: state, Settings: s.Dream, Runner: tc.runner, Provider: "test"}
			cs := connect(t, Options{Base: base, Version: "test"})
			var out RunOutput
			call(t, cs, "dream_run", map[string]any{"apply": tc.apply}, &out, false)
			if !out.Staged {
				t.Fatalf("dream_run did not stage: %+v", out)
			}
			d, err := dream.New(base)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			staged, err := d.Diff(context.Background(), out.TaskID)
			reason := staged.ParkReason
			if err != nil || staged.Source != dream.DiffStaged || !strings.HasPrefix(reason, tc.wantReason) {
				t.Fatalf("park reason %q (%v), want %q...", reason, err, tc.wantReason)
			}
			msg := call(t, cs, "dream_apply", map[string]any{"id": out.TaskID}, nil, true)
			if !strings.Contains(msg, tc.wantErr) || !strings.Contains(msg, "dream apply "+out.TaskID) {
				t.Fatalf("dream_apply refusal does not tell the user what to run: %s", msg)
			}
			if got := readFile(t, filepath.Join(mem, "build.md")); got != memBuild {
				t.Fatalf("a refused dream_apply changed the memory:\n%s", got)
			}
			if got := readFile(t, filepath.Join(mem, "prefs.md")); got != memPrefs {
				t.Fatalf("a refused dream_apply changed the memory:\n%s", got)
			}
			// The human's apply (`dream apply ID`) still lands it.
			if _, _, err := d.Apply(context.Background(), out.TaskID); err != nil {
				t.Fatalf("the user's apply: %v", err)
			}
			if readFile(t, filepath.Join(mem, "build.md")) == memBuild && readFile(t, filepath.Join(mem, "prefs.md")) == memPrefs {
				t.Fatal("the user's apply landed nothing")
			}
		})
	}
}

// A dream staged only because dream_run was not asked to apply stays the
// model's to apply.
func TestMCPApplyLandsPlainReview(t *testing.T) {
	f := newFixture(t)
	var out RunOutput
	call(t, f.cs, "dream_run", map[string]any{}, &out, false)
	if !out.Staged {
		t.Fatalf("not staged: %+v", out)
	}
	call(t, f.cs, "dream_apply", map[string]any{"id": out.TaskID}, nil, false)
	if readFile(t, filepath.Join(f.mem, "prefs.md")) == memPrefs {
		t.Fatal("dream_apply landed nothing")
	}
	// Applied, it is no longer staged: a second apply says so.
	if msg := call(t, f.cs, "dream_apply", map[string]any{"id": out.TaskID}, nil, true); !strings.Contains(msg, "is not staged") {
		t.Errorf("a second dream_apply: %s", msg)
	}
}
