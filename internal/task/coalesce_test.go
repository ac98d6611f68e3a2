package task

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestProgressIsCoalesced: with the default interval, a burst of progress
// events costs at most a handful of writes, reaches the disk within the
// interval, and Finish always writes the final state.
func TestProgressIsCoalesced(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r.pollInterval = 10 * time.Millisecond
	r.flushEvery = 50 * time.Millisecond
	h := mustStart(t, r, Entry{})
	path := r.entryPath(h.ID())
	writes := 0
	last, _ := os.Stat(path)
	for i := range 2000 {
		if err := h.AddToolCall(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err == nil && (!fi.ModTime().Equal(last.ModTime()) || !os.SameFile(fi, last)) {
			writes++
			last = fi
		}
		_ = i
	}
	if writes > 20 {
		t.Errorf("2000 tool calls wrote the entry %d times; want coalesced writes", writes)
	}
	waitUntil(t, time.Second, func() bool { return mustGet(t, r, h.ID()).ToolCalls == 2000 })
	if err := h.AddTurn("last turn"); err != nil {
		t.Fatal(err)
	}
	if err := h.Finish(StatusCompleted, ""); err != nil {
		t.Fatal(err)
	}
	e := mustGet(t, r, h.ID())
	if e.Status != StatusCompleted || len(e.Turns) != 1 || e.Turns[0] != "last turn" {
		t.Errorf("Finish lost coalesced progress: %+v", e)
	}
}

// TestTouchedFilesCapped: thousands of touched files keep the entry small
// (a capped list and the exact count), repeats are not counted, and the
// first file is on disk at once (the phase flip is not delayed).
func TestTouchedFilesCapped(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r.flushEvery = time.Hour // only urgent writes and Finish reach the disk
	h := mustStart(t, r, Entry{})
	if err := h.AddFileTouched("f0.md"); err != nil {
		t.Fatal(err)
	}
	if e := mustGet(t, r, h.ID()); e.Phase != PhaseUpdating || e.FilesTouchedTotal != 1 {
		t.Errorf("first touched file not written at once: %+v", e)
	}
	const n = 5000
	for i := range n {
		if err := h.AddFileTouched(fmt.Sprintf("f%d.md", i)); err != nil {
			t.Fatal(err)
		}
		if err := h.AddFileTouched(fmt.Sprintf("f%d.md", i/2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Finish(StatusCompleted, ""); err != nil {
		t.Fatal(err)
	}
	e := mustGet(t, r, h.ID())
	if e.FilesTouchedTotal != n || len(e.FilesTouched) != MaxFilesListed || e.FilesTouched[0] != "f0.md" {
		t.Errorf("touched: total %d, listed %d (first %q); want %d and %d", e.FilesTouchedTotal, len(e.FilesTouched), e.FilesTouched[0], n, MaxFilesListed)
	}
	if fi, _ := os.Stat(r.entryPath(h.ID())); fi.Size() > 16<<10 {
		t.Errorf("entry file is %d bytes", fi.Size())
	}
}

func waitUntil(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkProgress is the per-event cost of a running dream's progress
// with the default coalescing, against writing every event through.
func BenchmarkProgress(b *testing.B) {
	for _, every := range []time.Duration{FlushInterval, 0} {
		b.Run(fmt.Sprintf("flush-every-%s", every), func(b *testing.B) {
			r, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			r.flushEvery = every
			h, err := r.Start(Entry{})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Finish(StatusCompleted, "")
			for i := 0; b.Loop(); i++ {
				h.AddFileTouched(fmt.Sprintf("topic-%d.md", i))
				h.AddTurn("indexed a topic")
			}
		})
	}
}
