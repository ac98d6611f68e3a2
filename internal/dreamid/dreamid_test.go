package dreamid_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/dreamid"
	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// TestMemoryDirOfEveryDream: every id `dream` prints or lists leads back to
// its memory dir from the state dir alone: a landed dream, a staged one, an
// applied one, an undo, a hand edit, and each of those once the task
// registry was pruned and the event log lost; two memory dirs share the
// state dir, so a prefix of both is ambiguous and names them.
func TestMemoryDirOfEveryDream(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	state := filepath.Join(root, "state")
	newMemory := func(name string) (*dream.Dreamer, string) {
		mem := filepath.Join(root, name)
		mkfile(t, filepath.Join(mem, "MEMORY.md"), "# Memory\n\n- [偏好](prefs.md) — 习惯\n")
		mkfile(t, filepath.Join(mem, "prefs.md"), "# 偏好\n\n## Go\n\n- 用 tab 缩进。\n- Run `go vet` before committing.\n- 用 tab 缩进。\n")
		d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: settings.DreamDefaults(), Runner: &runner.Offline{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		abs, _ := filepath.Abs(mem)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		return d, abs
	}
	landedD, landedMem := newMemory("notes with spaces")
	landed, err := landedD.Run(ctx, dream.RunOptions{})
	if err != nil || landed.Status != dream.StatusCompleted || len(landed.Changes) == 0 {
		t.Fatalf("landed dream: %+v %v", landed, err)
	}
	undo, err := landedD.Undo(ctx, landed.TaskID, false)
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(landedMem, "by-hand.md"), "# 手写\n\n> a quote kept by hand\n")
	if _, err := landedD.Run(ctx, dream.RunOptions{}); err != nil { // records the hand edit first
		t.Fatal(err)
	}
	log, err := landedD.Log(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	hand := ""
	for _, e := range log {
		if e.Kind == "hand" && e.ID != log[len(log)-1].ID {
			hand = e.ID
		}
	}
	if hand == "" {
		t.Fatalf("no hand-edit entry in %+v", log)
	}
	stagedD, stagedMem := newMemory("staged")
	staged, err := stagedD.Run(ctx, dream.RunOptions{Review: true})
	if err != nil || staged.Status != dream.StatusStaged {
		t.Fatalf("staged dream: %+v %v", staged, err)
	}
	appliedD, appliedMem := newMemory("applied")
	applied, err := appliedD.Run(ctx, dream.RunOptions{Review: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := appliedD.Apply(ctx, applied.TaskID); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, id, mem string }{
		{"landed", landed.TaskID, landedMem},
		{"undo", undo.ID, landedMem},
		{"hand edit", hand, landedMem},
		{"staged", staged.TaskID, stagedMem},
		{"applied", applied.TaskID, appliedMem},
	}
	check := func(stage string) {
		t.Helper()
		for _, c := range cases {

			got, err := dreamid.MemoryDir(ctx, state, c.id)
			if err != nil || filepath.Clean(got) != c.mem {
				t.Errorf("%s: %s %s: %q, %v; want %s", stage, c.name, c.id, got, err, c.mem)
			}
		}
	}
	check("all records")
	// Every dream of this test started within the same minute or so: a
	// prefix of the date matches dreams of all three memory dirs.
	var amb *dreamid.AmbiguousError
	if _, err := dreamid.MemoryDir(ctx, state, landed.TaskID[:4]); !errors.As(err, &amb) || !errors.Is(err, task.ErrAmbiguous) || len(amb.MemoryDirs) < 2 {
		t.Errorf("shared prefix: %v, want an AmbiguousDreamError naming the memory dirs", err)
	}
	tasks, _ := filepath.Glob(filepath.Join(state, "tasks", "*"))
	for _, p := range tasks {
		os.RemoveAll(p)
	}
	check("tasks pruned")
	if err := os.Remove(filepath.Join(state, "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	check("tasks pruned and no event log")
	if _, err := dreamid.MemoryDir(ctx, state, landed.TaskID[:4]); !errors.As(err, &amb) || len(amb.MemoryDirs) != 3 {
		t.Errorf("shared prefix in the staging and audit histories: %v, want all three memory dirs", err)
	}
	if got, err := dreamid.MemoryDir(ctx, state, "undo-"); err != nil || got != landedMem {
		t.Errorf("a prefix of entries of one history: %q %v, want its memory dir (Show names the entries)", got, err)
	}
	if _, err := dreamid.MemoryDir(ctx, state, "20990101-000000-dead"); !errors.Is(err, dreamid.ErrUnknown) {
		t.Errorf("unknown id: %v", err)
	}
}

// BenchmarkMemoryDirOf measures each record dreamid.MemoryDir may have to ask,
// with twenty memory dirs dreamt in one state dir: a task id (the task
// registry), the same once the registry is pruned (the event log), and an
// undo id (the audit histories, one git process per memory dir).
func BenchmarkMemoryDirOf(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir()
	state := filepath.Join(root, "state")
	var taskID, undoID string
	for i := 0; i < 20; i++ {
		mem := filepath.Join(root, "mem", string(rune('a'+i)))
		for name, body := range map[string]string{"MEMORY.md": "# Memory\n\n- [偏好](prefs.md) — 习惯\n", "prefs.md": "# 偏好\n\n- 用 tab 缩进。\n- 用 tab 缩进。\n"} {
			if err := os.MkdirAll(mem, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(mem, name), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: settings.DreamDefaults(), Runner: &runner.Offline{}})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := d.Run(ctx, dream.RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		taskID = rep.TaskID
		if i == 0 {
			u, err := d.Undo(ctx, rep.TaskID, false)
			if err != nil {
				b.Fatal(err)
			}
			undoID = u.ID
		}
		d.Close()
	}
	lookup := func(b *testing.B, id string) {
		for i := 0; i < b.N; i++ {
			if _, err := dreamid.MemoryDir(ctx, state, id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("registry", func(b *testing.B) { lookup(b, taskID) })
	b.Run("audit", func(b *testing.B) { lookup(b, undoID) })
	tasks, _ := filepath.Glob(filepath.Join(state, "tasks", "*"))
	for _, p := range tasks {
		os.RemoveAll(p)
	}
	b.Run("events", func(b *testing.B) { lookup(b, taskID) })
}

func mkfile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
