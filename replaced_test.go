package dream

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
)

// A dream that rewrites memory files keeps the versions it replaced (on a
// file system where freeing waits for the device) only to free them beside
// its audit record, and frees them before it returns:
// nothing of them is left in the state dir. Serial: it wraps the
// removeReplaced seam, which holds the freeing back a moment so that a
// dream that did not wait for it would return first.
func TestDreamLeavesNoReplacedFiles(t *testing.T) {
	f := newFixture(t)
	var kept []string
	var freed bool
	removeReplaced = func(dir string) error {
		filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
			if err == nil && !de.IsDir() {
				kept = append(kept, p)
			}
			return err
		})
		time.Sleep(100 * time.Millisecond)
		err := journal.RemoveReplaced(dir)
		freed = err == nil
		return err
	}
	keepReplaced = func(string) bool { return true }
	t.Cleanup(func() { removeReplaced, keepReplaced = journal.RemoveReplaced, fsutil.FreeWaitsOnDevice })
	notes := filepath.Join(f.mem, "notes.md")
	if err := os.WriteFile(notes, []byte("# Notes\n\n- The build uses make.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.runner = nil
	d := f.dreamer(t, func(c *Config) {
		c.Runner = RunnerFunc(func(ctx context.Context, job Job) (Outcome, error) {
			p := filepath.Join(job.MemoryDir, "notes.md")
			b, err := os.ReadFile(p)
			if err != nil {
				return Outcome{}, err
			}
			if err := os.WriteFile(p, append(b, "- Tests run with `go test -race ./...`.\n"...), 0o644); err != nil {
				return Outcome{}, err
			}
			job.Progress(Progress{Kind: ProgressFileTouched, Path: "notes.md"})
			return Outcome{Turns: 1, FilesTouched: []string{"notes.md"}}, nil
		})
	})
	rep, err := d.StartManual(context.Background())
	if err != nil || rep.Status != StatusCompleted {
		t.Fatalf("StartManual: %v (%+v)", err, rep)
	}
	if b, err := os.ReadFile(notes); err != nil || !strings.HasSuffix(string(b), "- Tests run with `go test -race ./...`.\n") {
		t.Fatalf("notes.md = %q, %v: the dream's edit did not land", b, err)
	}
	if len(kept) != 1 || !freed {
		t.Fatalf("the dream kept %q and freed them: %v; want notes.md's old version, freed before it returned", kept, freed)
	}
	var left []string
	err = filepath.WalkDir(f.state, func(p string, de fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(de.Name(), ".replaced-") {
			left = append(left, p)
		}
		return err
	})
	if err != nil || len(left) != 0 {
		t.Fatalf("replaced files left: %v (%v)", left, err)
	}
}
