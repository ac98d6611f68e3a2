package dream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/lock"
)

// takeoverRunner is a job during which another agent (following the seeds'
// protocol) writes its PID into the lock; the job itself writes a memory
// file, which must never land.
type takeoverRunner struct{ pid int }

func (r takeoverRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	if err := os.WriteFile(filepath.Join(job.MemoryDisplayDir, lock.FileName), []byte(strconv.Itoa(r.pid)), 0o644); err != nil {
		return Outcome{}, err
	}
	if err := os.WriteFile(filepath.Join(job.MemoryDir, "dreamt.md"), []byte("a dream\n"), 0o644); err != nil {
		return Outcome{}, err
	}
	return Outcome{Turns: 1, FilesTouched: []string{"dreamt.md"}}, nil
}

// TestFenceBeforeCommit: a takeover that happens just before the job
// returns (too late for the watcher) is caught by the check before the
// commit: nothing lands, the error names the new holder, and its body stays.
func TestFenceBeforeCommit(t *testing.T) {
	for _, review := range []bool{false, true} {
		f := newFixture(t)
		other := os.Getppid()
		d := f.dreamer(t, func(c *Config) { c.Runner = takeoverRunner{pid: other} })
		rep, err := d.Run(context.Background(), RunOptions{Review: review})
		want := "lock taken over by PID " + strconv.Itoa(other)
		if !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), want) || errors.Is(err, ErrLockHeld) {
			t.Fatalf("review %v: Run = %v, want ErrLockLost naming %q", review, err, want)
		}
		if rep.Status != StatusFailed || len(rep.FilesTouched) != 0 {
			t.Errorf("report %+v", rep)
		}
		if _, err := os.Stat(filepath.Join(f.mem, "dreamt.md")); !os.IsNotExist(err) {
			t.Errorf("the dream landed after losing the lock: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(f.mem, lock.FileName)); string(b) != strconv.Itoa(other) {
			t.Errorf("the new holder's body became %q", b)
		}
	}
}
