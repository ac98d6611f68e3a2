package lock

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestCrashRecoveryAcrossStateDirs: a dream process is SIGKILLed holding the
// lock; the next acquirer has another state dir (so no guard record of that
// dream), yet still returns the mtime from before the dead dream, so the
// crash does not close the time gate for a day. While the dream lived, the
// other state dir's Inspect saw it as a live dream.
func TestCrashRecoveryAcrossStateDirs(t *testing.T) {
	if !guardSupported {
		t.Skip("no flock on this system")
	}
	f := newFixture(t)
	if probe := f.path() + ".probe"; os.WriteFile(probe, nil, 0o644) == nil {
		defer os.Remove(probe)
		if err := syscall.Setxattr(probe, holderAttr, []byte("{}"), 0); err != nil {
			t.Skipf("no user xattrs on this file system: %v", err)
		}
	}
	prior := time.Now().Add(-30 * time.Hour).Truncate(time.Microsecond)
	f.write(t, nil, prior)
	child := startHolder(t, f.memDir, f.guard)
	other := New(f.memDir, f.guard+"-other-state-dir")
	h, err := other.Inspect()
	if err != nil || !h.Live || !h.Dream || h.PID != child.Process.Pid {
		t.Errorf("Inspect from another state dir = %+v, %v; want a live dream", h, err)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	got := mustAcquire(t, other)
	if !got.Equal(prior) {
		t.Errorf("prior after a crash in another state dir = %v, want %v", got, prior)
	}
	if err := other.Rollback(got); err != nil {
		t.Fatal(err)
	}
	if at, _ := other.LastConsolidatedAt(); !at.Equal(prior) {
		t.Errorf("mtime after recovery = %v, want %v", at, prior)
	}
}
