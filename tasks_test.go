package dream_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/dreamid"
	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

func TestTaskAPI(t *testing.T) {
	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	mkfile(t, filepath.Join(mem, "MEMORY.md"), "# Memory\n\n- [偏好](prefs.md) — 习惯\n")
	mkfile(t, filepath.Join(mem, "prefs.md"), "# 偏好\n\n## Go\n\n- 用 tab 缩进。\n- Run `go vet` before committing.\n- 用 tab 缩进。\n")
	started := make(chan struct{})
	s := settings.DreamDefaults()
	d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: s,
		Runner: dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
			close(started)
			<-ctx.Done()
			return dream.Outcome{}, context.Cause(ctx)
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	done := make(chan dream.Report, 1)
	go func() { r, _ := d.Run(context.Background(), dream.RunOptions{}); done <- r }()
	<-started
	reg, err := task.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := reg.List()
	if err != nil || len(ts) != 1 || ts[0].Status != task.StatusRunning {
		t.Fatalf("Tasks: %+v %v", ts, err)
	}
	id := ts[0].ID
	e, err := reg.KillWait(context.Background(), id[:len(id)-2], 20*time.Second)
	if err != nil || e.Status != task.StatusKilled {
		t.Fatalf("KillWait: %+v %v", e, err)
	}
	if r := <-done; r.Status != dream.StatusKilled {
		t.Errorf("report %s", r.Status)
	}
	if _, err := reg.KillWait(context.Background(), id, 0); !errors.Is(err, task.ErrFinished) {
		t.Errorf("second kill: %v", err)
	}
	if _, err := reg.KillWait(context.Background(), "nope", 0); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("kill unknown: %v", err)
	}
	abs, _ := filepath.Abs(mem)
	if got, err := dreamid.MemoryDir(context.Background(), state, id); err != nil || got != abs {
		t.Errorf("dreamid.MemoryDir: %q %v", got, err)
	}
	// Once the task entry is pruned, the event log still knows.
	entries, _ := filepath.Glob(filepath.Join(state, "tasks", "*.json"))
	for _, p := range entries {
		os.Remove(p)
	}
	if got, err := dreamid.MemoryDir(context.Background(), state, id); err != nil || got != abs {
		t.Errorf("dreamid.MemoryDir from telemetry: %q %v", got, err)
	}
	if _, err := dreamid.MemoryDir(context.Background(), state, "20990101"); !errors.Is(err, dreamid.ErrUnknown) {
		t.Errorf("dreamid.MemoryDir unknown: %v", err)
	}
}

func TestDiffStagedThenAudited(t *testing.T) {
	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	mkfile(t, filepath.Join(mem, "MEMORY.md"), "# Memory\n\n- [偏好](prefs.md) — 习惯\n")
	mkfile(t, filepath.Join(mem, "prefs.md"), "# 偏好\n\n## Go\n\n- 用 tab 缩进。\n- Run `go vet` before committing.\n- 用 tab 缩进。\n")
	d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: settings.DreamDefaults(), Runner: &runner.Offline{}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	rep, err := d.Run(ctx, dream.RunOptions{Review: true})
	if err != nil || rep.Status != dream.StatusStaged {
		t.Fatalf("%+v %v", rep, err)
	}
	staged, err := d.Diff(ctx, rep.TaskID)
	if err != nil || staged.Source != dream.DiffStaged || len(staged.Changes) != 1 || !strings.Contains(staged.Diff, "-- 用 tab 缩进。") {
		t.Fatalf("staged diff: %+v %v", staged, err)
	}
	if _, _, err := d.Apply(ctx, rep.TaskID); err != nil {
		t.Fatal(err)
	}
	landed, err := d.Diff(ctx, rep.TaskID)
	if err != nil || landed.Source != dream.DiffAudit || len(landed.Changes) != 1 || landed.Changes[0].Path != "prefs.md" || landed.Diff == "" {
		t.Fatalf("landed diff: %+v %v", landed, err)
	}
	if _, err := d.Diff(ctx, "20990101-000000-dead"); err == nil {
		t.Error("Diff of an unknown id succeeded")
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	prefs := "# 偏好\n\n## Go\n\n- 用 tab 缩进。\n- Run `go vet` before committing.\n- 用 tab 缩进。\n"
	mkfile(t, filepath.Join(mem, "MEMORY.md"), "# Memory\n\n- [偏好](prefs.md) — 习惯\n")
	mkfile(t, filepath.Join(mem, "prefs.md"), prefs)
	d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: settings.DreamDefaults(), Runner: &runner.Offline{}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	before, err := d.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Run(ctx, dream.RunOptions{DryRun: true})
	if err != nil || rep.Status != dream.StatusDryRun || len(rep.Changes) != 1 || rep.Changes[0].Path != "prefs.md" {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	if b, _ := os.ReadFile(filepath.Join(mem, "prefs.md")); string(b) != prefs {
		t.Fatalf("a dry run changed prefs.md:\n%s", b)
	}
	if !strings.Contains(rep.Diff, "+++ b/prefs.md") || !strings.Contains(rep.Diff, "\n-- 用 tab 缩进。") {
		t.Fatalf("the dry run's diff does not show what it would change:\n%s", rep.Diff)
	}
	staged, err := d.Staged()
	if err != nil || len(staged) != 0 {
		t.Fatalf("a dry run left staging: %v %v", staged, err)
	}
	after, err := d.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if (before.LastConsolidatedAt == nil) != (after.LastConsolidatedAt == nil) || after.Next != before.Next {
		t.Fatalf("a dry run moved the time gate: before %v %s, after %v %s", before.LastConsolidatedAt, before.Next, after.LastConsolidatedAt, after.Next)
	}
	rep, err = d.Run(ctx, dream.RunOptions{})
	if err != nil || rep.Status != dream.StatusCompleted || len(rep.Changes) != 1 {
		t.Fatalf("the real run after a dry run: %+v %v", rep, err)
	}
}
