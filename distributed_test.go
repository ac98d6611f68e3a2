package dream

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func bareRepo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", p).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	return p
}

func gitConfig(t *testing.T, repo string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"--git-dir=" + repo, "config"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git config %v: %v %s", args, err, out)
	}
}

// TestDreamReportsSyncAndGoesOnWithoutRemote: a dream lands whatever
// happens to the remote after the pull, and its report says what sync
// did: with the remote unreachable the dream goes on with this machine's
// memory (not refused) and says it was not pushed; with a remote that
// refuses the push the dream still completes and the report carries the
// failure; once the remote takes pushes, Sync pushes every commit made
// meanwhile.
func TestDreamReportsSyncAndGoesOnWithoutRemote(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	dir := t.TempDir()
	remote := filepath.Join(dir, "memory.git")
	d := f.dreamer(t, func(c *Config) { c.Settings.SyncRemote = remote })

	rep, err := d.Run(ctx, RunOptions{})
	if err != nil || rep.Status != StatusCompleted {
		t.Fatalf("a dream with the remote unreachable: %v %+v", err, rep)
	}
	if rep.Sync == nil || !strings.Contains(rep.Sync.Error, "could not be reached") || rep.Sync.Pushed != 0 {
		t.Fatalf("the report's sync with the remote unreachable: %+v", rep.Sync)
	}

	bareRepo(t, dir)
	gitConfig(t, remote, "receive.maxInputSize", "1") // the server refuses every pack
	rep, err = d.Run(ctx, RunOptions{})
	if err != nil || rep.Status != StatusCompleted {
		t.Fatalf("a dream whose push fails: %v %+v", err, rep)
	}
	if rep.Sync == nil || !strings.Contains(rep.Sync.Error, "not pushed") || rep.Sync.Pushed != 0 {
		t.Fatalf("the report's sync with the push refused: %+v", rep.Sync)
	}
	st, err := d.Status(ctx)
	if err != nil || st.Sync == nil || st.Sync.Next != "push" || st.Sync.Ahead < 2 {
		t.Fatalf("status after the failed push: %v %+v", err, st.Sync)
	}

	gitConfig(t, remote, "--unset", "receive.maxInputSize")
	sr, err := d.Sync(ctx)
	if err != nil || sr.Pushed != st.Sync.Ahead || sr.State.State != "in sync" {
		t.Fatalf("sync once the remote takes pushes: %v %+v, want %d pushed", err, sr, st.Sync.Ahead)
	}
}

// TestSyncWaitsForTheLock: a sync that finds the lock held waits for it
// (SyncOptions.Wait) and lands once the holder is done; without a wait,
// or when the wait runs out, it is a *LockHeldError that says how long it
// waited.
func TestSyncWaitsForTheLock(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	remote := bareRepo(t, t.TempDir())
	d := f.dreamer(t, func(c *Config) { c.Settings.SyncRemote = remote })
	holder := f.dreamer(t, func(c *Config) { c.Settings.SyncRemote = remote })

	held, err := acquireOnce(ctx, holder.lock)
	if err != nil {
		t.Fatal(err)
	}
	var he *LockHeldError
	if _, err := d.SyncWith(ctx, SyncOptions{}); !errors.As(err, &he) || he.Waited != 0 {
		t.Fatalf("sync without waiting: %v, want a *LockHeldError", err)
	}
	start := time.Now()
	if _, err := d.SyncWith(ctx, SyncOptions{Wait: 300 * time.Millisecond}); !errors.As(err, &he) || he.Waited != 300*time.Millisecond ||
		!strings.Contains(err.Error(), "after waiting 300ms") || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("sync whose wait ran out: %v after %s", err, time.Since(start))
	}

	done := make(chan error, 1)
	start = time.Now()
	go func() {
		rep, err := d.SyncWith(ctx, SyncOptions{Wait: time.Minute})
		if err == nil && rep.Pushed == 0 {
			err = errors.New("nothing pushed")
		}
		done <- err
	}()
	time.Sleep(400 * time.Millisecond)
	if err := held.Release(false); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("the waiting sync: %v after %s", err, time.Since(start))
	}
}
