package dream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

func newFile(t *testing.T) (fileLock, string) {
	t.Helper()
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory")
	if err := os.Mkdir(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	return fileLock{lock.New(mem, filepath.Join(dir, "state", "guard"))}, mem
}

// TestHeldOwnsPrior: the held that acquireOnce returns rolls the lock back to
// the time its own acquisition found, ends the acquisition once, and a
// second Acquire while it is held reports the holder.
func TestHeldOwnsPrior(t *testing.T) {
	ctx := context.Background()
	f, mem := newFile(t)
	lockPath := filepath.Join(mem, lock.FileName)
	prior := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	if err := os.WriteFile(lockPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lockPath, prior, prior); err != nil {
		t.Fatal(err)
	}
	h, err := acquireOnce(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Prior().Equal(prior) {
		t.Errorf("Prior = %v, want %v", h.Prior(), prior)
	}
	if _, err := acquireOnce(ctx, f); !errors.Is(err, lock.ErrHeld) {
		t.Errorf("a second Acquire while held: %v, want ErrHeld", err)
	}
	if err := h.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got, err := f.LastConsolidatedAt(); err != nil || !got.Equal(prior) {
		t.Errorf("after Rollback: last = %v (%v), want %v", got, err, prior)
	}
	if !h.Done() || !errors.Is(h.Complete(), lock.ErrNotHeld) || !errors.Is(h.Rollback(), lock.ErrNotHeld) {
		t.Error("a Held ended twice")
	}

	h, err = acquireOnce(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(true); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.LastConsolidatedAt(); !got.After(prior.Add(47 * time.Hour)) {
		t.Errorf("after Complete: last = %v, want now", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := acquireOnce(cancelled, f); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a cancelled context: %v", err)
	}
}
func TestFileFence(t *testing.T) {
	ctx := context.Background()
	f, mem := newFile(t)
	if err := f.Fence(ctx); !errors.Is(err, lock.ErrFenced) {
		t.Fatalf("Fence without the lock: %v, want lock.ErrFenced", err)
	}
	if _, err := f.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	if err := f.Fence(ctx); err != nil {
		t.Fatalf("Fence while holding: %v", err)
	}
	st, err := f.Describe(ctx)
	if err != nil || st.Backend != "file" || !st.Held || st.PID != os.Getpid() {
		t.Fatalf("Describe while holding: %+v %v", st, err)
	}
	// Another agent that knows only the file reclaims it (it found the
	// mtime over an hour old) and writes its PID: the holder is fenced.
	if err := os.WriteFile(filepath.Join(mem, lock.FileName), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Fence(ctx); !errors.Is(err, lock.ErrFenced) || !strings.Contains(strings.ToLower(err.Error()), "pid 1") {
		t.Fatalf("Fence after a takeover: %v, want lock.ErrFenced naming pid 1", err)
	}
	if err := f.Complete(); !errors.Is(err, lock.ErrLost) {
		t.Fatalf("Complete after a takeover: %v, want ErrLost", err)
	}
}

func TestFileSetTaskAndClose(t *testing.T) {
	f, _ := newFile(t)
	if f.SetTask(context.Background(), "x") != nil || f.Close() != nil {
		t.Fatal("the file backend's no-ops failed")
	}
}
