package dream

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/settings"
)

// replaceFile writes as dream's own writers do: a new file renamed over
// the old one.
func replaceFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// replacingRunner is a host Runner that promises to replace files, so it
// gets the linked staging.
type replacingRunner struct{ RunnerFunc }

func (replacingRunner) ReplacesFiles() bool { return true }

// Issue 9, class 11, through the whole pipeline: while the dream runs the
// user edits a file the dream does not touch, a file the dream rewrites at
// another place, and a line the dream rewrites. The dream completes; the
// first two edits and every change of the dream land (the second merged);
// for the overlap the user's line stays and the dream's is parked for
// review. (On the original code the dream failed with "memory changed
// during the dream" and nothing of it landed.)
func TestDreamLandsAroundConcurrentHandEdits(t *testing.T) {
	for _, linked := range []bool{false, true} {
		t.Run(map[bool]string{false: "copied", true: "linked"}[linked], func(t *testing.T) {
			root := t.TempDir()
			mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
			files := map[string]string{
				"MEMORY.md": "# Memory\n\n- [Build](build.md) — how it builds\n- [People](people.md) — who is who\n- [Deploy](deploy.md) — shipping\n",
				"build.md":  "# Build\n\n- make all\n\n## Tests\n\n- go test ./...\n",
				"people.md": "# People\n\n- 王芳 owns billing\n",
				"deploy.md": "# Deploy\n\n1. Tag the release.\n2. Push the tag.\n",
				"unused.md": "# Unused\n",
			}
			for p, b := range files {
				replaceFile(t, filepath.Join(mem, p), b)
			}
			run := func(ctx context.Context, job Job) (Outcome, error) {
				replaceFile(t, filepath.Join(job.MemoryDir, "build.md"), "# Build\n\n- make all (checked 2026-11-30)\n\n## Tests\n\n- go test ./...\n")
				replaceFile(t, filepath.Join(job.MemoryDir, "deploy.md"), "# Deploy\n\n1. Tag the release (vX.Y.Z).\n2. Push the tag.\n")
				replaceFile(t, filepath.Join(job.MemoryDir, "people.md"), "# People\n\n- 王芳 owns billing and invoices\n")
				// Meanwhile, by hand in the real memory dir:
				replaceFile(t, filepath.Join(mem, "unused.md"), "# Unused\n\nNow used.\n")
				replaceFile(t, filepath.Join(mem, "build.md"), "# Build\n\n- make all\n\n## Tests\n\n- go test -race ./...\n")
				replaceFile(t, filepath.Join(mem, "deploy.md"), "# Deploy\n\n1. Tag the release with git tag -s.\n2. Push the tag.\n")
				return Outcome{}, nil
			}
			var runner Runner = RunnerFunc(run)
			if linked {
				runner = replacingRunner{RunnerFunc(run)}
			}
			s := settings.DreamDefaults()
			// The loss guard compares the staging with the memory as it was
			// when the dream started, so the user's edits made meanwhile are
			// not losses of the dream's: the default max_loss holds.
			d, err := New(Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: runner})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			rep, err := d.Run(context.Background(), RunOptions{})
			if err != nil || rep.Status != StatusCompleted {
				t.Fatalf("dream = %s, %v (%s; %s)", rep.Status, err, rep.Error, rep.Summary)
			}
			want := map[string]string{
				"unused.md": "# Unused\n\nNow used.\n",
				"build.md":  "# Build\n\n- make all (checked 2026-11-30)\n\n## Tests\n\n- go test -race ./...\n",
				"deploy.md": "# Deploy\n\n1. Tag the release with git tag -s.\n2. Push the tag.\n",
				"people.md": "# People\n\n- 王芳 owns billing and invoices\n",
			}
			for p, w := range want {
				if b, _ := os.ReadFile(filepath.Join(mem, p)); string(b) != w {
					t.Errorf("%s = %q, want %q", p, b, w)
				}
			}
			if !slices.Equal(rep.Merged, []string{"build.md"}) || !slices.Equal(rep.ForReview, []string{"deploy.md"}) || rep.ReviewID == "" {
				t.Fatalf("report: merged %v, for review %v (%q)", rep.Merged, rep.ForReview, rep.ReviewID)
			}
			review, err := journal.Load(state, mem, rep.ReviewID)
			if err != nil {
				t.Fatal(err)
			}
			diff, err := review.Diff()
			if err != nil {
				t.Fatal(err)
			}
			if want := "-1. Tag the release with git tag -s.\n+1. Tag the release (vX.Y.Z).\n"; !strings.Contains(diff, want) {
				t.Errorf("the parked review does not hold the dream's change:\n%s", diff)
			}
			log, err := d.Log(context.Background(), 0)
			if err != nil || len(log) < 2 {
				t.Fatalf("log = %d entries, %v", len(log), err)
			}
			if log[0].ID != rep.TaskID || len(log[0].Files) != 2 {
				t.Errorf("the dream's history entry = %s with %+v", log[0].ID, log[0].Files)
			}
			// Undoing the dream takes back its changes only: the user's
			// edits made during it stay.
			if _, err := d.Undo(context.Background(), rep.TaskID, false); err != nil {
				t.Fatal(err)
			}
			for p, w := range map[string]string{
				"build.md":  "# Build\n\n- make all\n\n## Tests\n\n- go test -race ./...\n",
				"people.md": files["people.md"],
				"unused.md": "# Unused\n\nNow used.\n",
				"deploy.md": "# Deploy\n\n1. Tag the release with git tag -s.\n2. Push the tag.\n",
			} {
				if b, _ := os.ReadFile(filepath.Join(mem, p)); string(b) != w {
					t.Errorf("after undo %s = %q, want %q", p, b, w)
				}
			}
		})
	}
}
