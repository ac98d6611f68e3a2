package dream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dreamkit/dream/settings"
)

// A refused edit is put back as the memory was when the dream started and
// left out of the dream, even when the user saved that file while the dream
// ran: the user's version stays in the memory dir, is not recorded as the
// dream's change, and undoing the dream keeps it. (Before, the guard copied
// the live file, the user's edit, into staging, so the dream landed it as
// its own change and `dream undo` reverted it.)
func TestRefusedEditKeepsHandEditMadeDuringDream(t *testing.T) {
	for _, linked := range []bool{false, true} {
		t.Run(map[bool]string{false: "copied", true: "linked"}[linked], func(t *testing.T) {
			root := t.TempDir()
			mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
			files := map[string]string{
				"MEMORY.md": "# Memory\n\n- [Build](build.md) — how it builds\n- [Rules](rules.md) — house rules\n",
				"build.md":  "# Build\n\n1. `make all`\n2. `go test ./...`\n\n## 发布\n\n> Tag first, then push.\n",
				"rules.md":  "# Rules\n\n## Review\n\n- 两人审阅 every change to billing\n- See [Build](build.md) for the test steps.\n",
			}
			for p, b := range files {
				replaceFile(t, filepath.Join(mem, p), b)
			}
			userRules := "# Rules\n\n## Review\n\n- 两人审阅 every change to billing\n- Security reviews go to 李雷.\n- See [Build](build.md) for the test steps.\n"
			dreamBuild := "# Build\n\n1. `make all` (checked 2026-11-30)\n2. `go test ./...`\n\n## 发布\n\n> Tag first, then push.\n"
			run := func(ctx context.Context, job Job) (Outcome, error) {
				replaceFile(t, filepath.Join(job.MemoryDir, "build.md"), dreamBuild)
				replaceFile(t, filepath.Join(job.MemoryDir, "rules.md"), "# Rules\n\n- 两人审阅 billing changes; see [Build](build.md).\n")
				// Meanwhile the user edits the file the guard will refuse.
				replaceFile(t, filepath.Join(mem, "rules.md"), userRules)
				return Outcome{}, nil
			}
			var runner Runner = RunnerFunc(run)
			if linked {
				runner = replacingRunner{RunnerFunc(run)}
			}
			var judged []byte
			check := func(rel string, before, after []byte) error {
				if rel != "rules.md" {
					return nil
				}
				judged = before
				return errors.New("rules.md: the host agent may not have it rewritten")
			}
			s := settings.DreamDefaults()
			d, err := New(Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: runner, CheckEdit: check})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			rep, err := d.Run(context.Background(), RunOptions{})
			if err != nil || rep.Status != StatusCompleted {
				t.Fatalf("dream = %s, %v (%s; %s)", rep.Status, err, rep.Error, rep.Summary)
			}
			if string(judged) != files["rules.md"] {
				t.Errorf("CheckEdit judged against %q, want the file as the dream found it", judged)
			}
			if !slices.Equal(rep.FilesTouched, []string{"build.md"}) {
				t.Errorf("files touched = %v, want [build.md]", rep.FilesTouched)
			}
			for p, w := range map[string]string{"rules.md": userRules, "build.md": dreamBuild} {
				if b, _ := os.ReadFile(filepath.Join(mem, p)); string(b) != w {
					t.Errorf("%s = %q, want %q", p, b, w)
				}
			}
			e, err := d.Show(context.Background(), rep.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range e.Files {
				if f.Path == "rules.md" {
					t.Errorf("the dream's audit commit records rules.md: %+v", e.Files)
				}
			}
			if _, err := d.Undo(context.Background(), rep.TaskID, false); err != nil {
				t.Fatal(err)
			}
			for p, w := range map[string]string{"rules.md": userRules, "build.md": files["build.md"]} {
				if b, _ := os.ReadFile(filepath.Join(mem, p)); string(b) != w {
					t.Errorf("after undo %s = %q, want %q", p, b, w)
				}
			}
		})
	}
}
