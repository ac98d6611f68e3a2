package lockbackend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

// TestHeldOwnsPrior: the Held that Acquire returns rolls the lock back to
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
	h, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Prior().Equal(prior) {
		t.Errorf("Prior = %v, want %v", h.Prior(), prior)
	}
	if _, err := f.Acquire(ctx); !errors.Is(err, lock.ErrHeld) {
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

	h, err = f.Acquire(ctx)
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
	if _, err := f.Acquire(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a cancelled context: %v", err)
	}
}
