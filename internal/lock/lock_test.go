//go:build unix

package lock

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixture is a memory dir and a guard path in a fresh temp dir.
type fixture struct {
	memDir, guard string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory")
	if err := os.Mkdir(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	return fixture{memDir: mem, guard: filepath.Join(dir, "state", "locks", "memory.guard")}
}

func (f fixture) lock() *Lock { return New(f.memDir, f.guard) }

func (f fixture) path() string { return filepath.Join(f.memDir, FileName) }

// write puts body in the lock file with the given mtime.
func (f fixture) write(t *testing.T, body []byte, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(f.path(), body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.path(), mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) body(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.path())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f fixture) mtime(t *testing.T) time.Time {
	t.Helper()
	fi, err := os.Stat(f.path())
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

func mustAcquire(t *testing.T, l *Lock) time.Time {
	t.Helper()
	prior, err := l.TryAcquire()
	if err != nil {
		t.Fatalf("TryAcquire: %v", err)
	}
	if !l.Held() {
		t.Fatal("Held() false after a successful TryAcquire")
	}
	return prior
}

var self = strconv.Itoa(os.Getpid())

func TestAcquireWithoutLockFile(t *testing.T) {
	f := newFixture(t)
	l := f.lock()
	if at, err := l.LastConsolidatedAt(); err != nil || !at.IsZero() {
		t.Fatalf("LastConsolidatedAt with no file = %v, %v", at, err)
	}
	if h, err := l.Inspect(); err != nil || h.Exists || h.Reason != "no lock file" {
		t.Fatalf("Inspect = %+v, %v", h, err)
	}
	before := time.Now()
	if prior := mustAcquire(t, l); !prior.IsZero() {
		t.Errorf("prior = %v, want zero", prior)
	}
	if got := f.body(t); got != self {
		t.Errorf("body = %q, want own pid %s", got, self)
	}
	fi, err := os.Stat(f.path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
	}
	if fi.ModTime().Before(before.Add(-time.Second)) {
		t.Errorf("mtime %v not refreshed", fi.ModTime())
	}
	h, err := l.Inspect()
	if err != nil || !h.Live || !h.Dream || h.PID != os.Getpid() {
		t.Errorf("Inspect while held = %+v, %v", h, err)
	}
	if _, err := l.TryAcquire(); !errors.Is(err, ErrHeld) {
		t.Errorf("second TryAcquire on the same Lock: %v, want ErrHeld", err)
	}
	if _, err := f.lock().TryAcquire(); !errors.Is(err, ErrHeld) {
		t.Errorf("TryAcquire by another Lock in this process: %v, want ErrHeld", err)
	}
	if err := l.Rollback(prior0()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(f.path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Rollback with zero prior left the file: %v", err)
	}
	if l.Held() {
		t.Error("Held() after Rollback")
	}
	if _, err := os.Lstat(filepath.Dir(f.guard)); err != nil {
		t.Errorf("guard directory not created: %v", err)
	}
	if fi, err := os.Stat(f.guard); err != nil || fi.Size() != 0 {
		t.Errorf("guard record not cleared after Rollback: %v, %v", fi, err)
	}
}

func prior0() time.Time { return time.Time{} }

func TestCompleteThenReacquire(t *testing.T) {
	f := newFixture(t)
	old := time.Now().Add(-30 * time.Hour).Truncate(time.Second)
	f.write(t, nil, old)
	l := f.lock()
	if prior := mustAcquire(t, l); !prior.Equal(old) {
		t.Fatalf("prior = %v, want %v", prior, old)
	}
	before := time.Now().Add(-time.Second)
	if err := l.Complete(); err != nil {
		t.Fatal(err)
	}
	if got := f.body(t); got != "" {
		t.Errorf("body after Complete = %q, want empty", got)
	}
	done := f.mtime(t)
	if done.Before(before) {
		t.Errorf("mtime after Complete = %v, want about now", done)
	}
	if at, _ := l.LastConsolidatedAt(); !at.Equal(done) {
		t.Errorf("LastConsolidatedAt = %v, want %v", at, done)
	}
	if l.Held() {
		t.Error("Held() after Complete")
	}
	if err := l.Complete(); !errors.Is(err, ErrNotHeld) {
		t.Errorf("second Complete: %v, want ErrNotHeld", err)
	}
	h, err := l.Inspect()
	if err != nil || h.Live || !strings.HasPrefix(h.Reason, "idle") {
		t.Errorf("Inspect after Complete = %+v, %v", h, err)
	}
	// An idle lock (empty body, fresh mtime) is immediately acquirable again.
	if prior := mustAcquire(t, l); !prior.Equal(done) {
		t.Errorf("reacquire prior = %v, want the Complete mtime %v", prior, done)
	}
	if err := l.Complete(); err != nil {
		t.Fatal(err)
	}
}

func TestRollbackRewindsToPrior(t *testing.T) {
	f := newFixture(t)
	old := time.Date(2025, 3, 4, 5, 6, 7, 891011121, time.UTC)
	f.write(t, nil, old)
	l := f.lock()
	prior := mustAcquire(t, l)
	if !prior.Equal(old) {
		t.Fatalf("prior = %v, want %v", prior, old)
	}
	if err := l.Rollback(prior); err != nil {
		t.Fatal(err)
	}
	if got := f.mtime(t); !got.Equal(old) {
		t.Errorf("mtime after Rollback = %v, want %v", got, old)
	}
	if got := f.body(t); got != "" {
		t.Errorf("body after Rollback = %q", got)
	}
	if err := l.Rollback(prior); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Rollback when not held: %v, want ErrNotHeld", err)
	}
}

// TestReclaim covers what an acquirer finds in the file: who it yields to
// and what it reclaims, with the prior it then returns.
func TestReclaim(t *testing.T) {
	now := time.Now()
	recent := now.Add(-5 * time.Minute)
	dead := deadPID(t)
	parent := os.Getppid()
	tests := []struct {
		name       string
		body       []byte
		mtime      time.Time
		wantHeld   bool
		wantReason string
	}{
		{"live pid", []byte(strconv.Itoa(parent)), recent, true, "live pid"},
		{"live pid with spaces and newline", []byte("  " + strconv.Itoa(parent) + " \n"), recent, true, "live pid"},
		{"dead pid", []byte(strconv.Itoa(dead)), recent, false, "dead pid"},
		{"old mtime", []byte(strconv.Itoa(parent)), now.Add(-2 * time.Hour), false, "stale"},
		{"garbage body", []byte("hello\x00world"), recent, false, "garbage body"},
		{"pid 0", []byte("0"), recent, false, "garbage body"},
		{"negative pid", []byte("-1"), recent, false, "garbage body"},
		{"huge pid", []byte("99999999999999999999999"), recent, false, "garbage body"},
		{"pid over max", []byte(strconv.Itoa(MaxPID + 1)), recent, false, "garbage body"},
		{"two pids", []byte("12 34"), recent, false, "garbage body"},
		{"10 MB body", bytes.Repeat([]byte("1"), 10<<20), recent, false, "garbage body (10485760 bytes)"},
		{"future mtime", []byte(strconv.Itoa(parent)), now.Add(3 * time.Hour), false, "mtime in the future"},
		{"slightly future mtime is fresh", []byte(strconv.Itoa(parent)), now.Add(20 * time.Second), true, "live pid"},
		{"empty body", nil, recent, false, "idle"},
		{"whitespace body", []byte(" \n\t"), recent, false, "idle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write(t, tt.body, tt.mtime)
			l := f.lock()
			h, err := l.Inspect()
			if err != nil {
				t.Fatal(err)
			}
			if h.Live != tt.wantHeld || !strings.Contains(h.Reason, tt.wantReason) {
				t.Errorf("Inspect = %+v, want live %v, reason containing %q", h, tt.wantHeld, tt.wantReason)
			}
			wantMTime := f.mtime(t)
			prior, err := l.TryAcquire()
			if tt.wantHeld {
				if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), strconv.Itoa(parent)) {
					t.Fatalf("TryAcquire = %v, want ErrHeld naming pid %d", err, parent)
				}
				if l.Held() {
					t.Error("Held() after yielding")
				}
				if got := f.body(t); got != string(tt.body) {
					t.Errorf("yielding changed the body to %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("TryAcquire: %v", err)
			}
			if !prior.Equal(wantMTime) {
				t.Errorf("prior = %v, want the file's mtime %v", prior, wantMTime)
			}
			if got := f.body(t); got != self {
				t.Errorf("body = %q, want own pid", got)
			}
			if err := l.Rollback(prior); err != nil {
				t.Fatal(err)
			}
			if got := f.mtime(t); !got.Equal(wantMTime) {
				t.Errorf("mtime after Rollback = %v, want %v", got, wantMTime)
			}
		})
	}
}

func TestSymlinkedLockFileIsReplacedNotFollowed(t *testing.T) {
	f := newFixture(t)
	target := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, f.path()); err != nil {
		t.Fatal(err)
	}
	l := f.lock()
	h, err := l.Inspect()
	if err != nil || h.Live || !strings.Contains(h.Reason, "symlink") {
		t.Fatalf("Inspect = %+v, %v", h, err)
	}
	mustAcquire(t, l)
	if err := l.Complete(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(f.path())
	if err != nil || !fi.Mode().IsRegular() {
		t.Errorf("lock file after acquire is %v, %v; want a regular file", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("symlink target written through: %q", b)
	}
}

func TestLockPathNotRegular(t *testing.T) {
	f := newFixture(t)
	if err := os.Mkdir(f.path(), 0o755); err != nil {
		t.Fatal(err)
	}
	l := f.lock()
	if _, err := l.Inspect(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Inspect of a directory: %v", err)
	}
	if _, err := l.TryAcquire(); err == nil || errors.Is(err, ErrHeld) {
		t.Errorf("TryAcquire of a directory: %v, want a plain error", err)
	}
	if l.Held() {
		t.Error("Held() after a failed TryAcquire")
	}
	// The guard must have been released: a fixed path acquires.
	if err := os.Remove(f.path()); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, l)
}

func TestMissingGuardPathAndMemoryDir(t *testing.T) {
	f := newFixture(t)
	if _, err := New(f.memDir, "").TryAcquire(); err == nil || errors.Is(err, ErrHeld) {
		t.Errorf("empty guard path: %v", err)
	}
	l := New(filepath.Join(f.memDir, "missing"), f.guard)
	if _, err := l.TryAcquire(); err == nil || errors.Is(err, ErrHeld) || l.Held() {
		t.Errorf("missing memory dir: %v", err)
	}
}

// TestLostToForeignAgent: an agent that knows nothing of the guard reclaims
// the lock mid-dream; Complete must not clobber its body or mtime.
func TestLostToForeignAgent(t *testing.T) {
	f := newFixture(t)
	l := f.lock()
	mustAcquire(t, l)
	foreign := time.Now().Add(-time.Minute).Truncate(time.Second)
	f.write(t, []byte(strconv.Itoa(os.Getppid())), foreign)
	if err := l.Complete(); !errors.Is(err, ErrLost) {
		t.Fatalf("Complete = %v, want ErrLost", err)
	}
	if l.Held() {
		t.Error("Held() after ErrLost")
	}
	if got := f.body(t); got != strconv.Itoa(os.Getppid()) {
		t.Errorf("foreign body clobbered: %q", got)
	}
	if got := f.mtime(t); !got.Equal(foreign) {
		t.Errorf("foreign mtime clobbered: %v", got)
	}
}

// TestAbandonedLockInProcess: a Lock whose guard descriptor is closed without
// Complete or Rollback (as process death would) is reclaimed by the next
// acquirer with the prior recorded before it began.
func TestAbandonedLockInProcess(t *testing.T) {
	if !guardSupported {
		t.Skip("no flock on this system")
	}
	f := newFixture(t)
	old := time.Now().Add(-40 * time.Hour).Truncate(time.Millisecond)
	f.write(t, nil, old)
	l1 := f.lock()
	mustAcquire(t, l1)
	l1.mu.Lock()
	l1.h.file.Close() // the kernel drops the flock, as on death
	l1.h = nil
	l1.mu.Unlock()
	// Our own PID is alive and the mtime is fresh, yet the guard proves the
	// holder gone.
	l2 := f.lock()
	prior := mustAcquire(t, l2)
	if !prior.Equal(old) {
		t.Errorf("prior = %v, want the recorded %v", prior, old)
	}
	if err := l2.Rollback(prior); err != nil {
		t.Fatal(err)
	}
	if got := f.mtime(t); !got.Equal(old) {
		t.Errorf("mtime after Rollback = %v, want %v", got, old)
	}
}

// TestCrashRecovery: a dream process acquires and is SIGKILLed; the next
// acquirer returns the mtime from before that dream, not the one it wrote.
func TestCrashRecovery(t *testing.T) {
	if !guardSupported {
		t.Skip("no flock on this system")
	}
	for _, tt := range []struct {
		name  string
		prior time.Time // zero: no lock file before the dream
	}{
		{"with prior", time.Now().Add(-30 * time.Hour).Truncate(time.Microsecond)},
		{"without lock file", time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if !tt.prior.IsZero() {
				f.write(t, nil, tt.prior)
			}
			child := startHolder(t, f.memDir, f.guard)
			childPID := strconv.Itoa(child.Process.Pid)
			if got := f.body(t); got != childPID {
				t.Fatalf("body = %q, want child pid %s", got, childPID)
			}
			l := f.lock()
			h, err := l.Inspect()
			if err != nil || !h.Live || !h.Dream {
				t.Errorf("Inspect of a live dream = %+v, %v", h, err)
			}
			// Clock skew cannot make a live dream reclaimable.
			future := time.Now().Add(5 * time.Hour)
			if err := os.Chtimes(f.path(), future, future); err != nil {
				t.Fatal(err)
			}
			if _, err := l.TryAcquire(); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), childPID) {
				t.Fatalf("TryAcquire against a live dream = %v", err)
			}
			if h, _ := l.Inspect(); !h.Live || !h.Dream {
				t.Errorf("Inspect of a future-mtime live dream = %+v", h)
			}
			if err := child.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			child.Wait()
			prior := mustAcquire(t, l)
			if !prior.Equal(tt.prior) {
				t.Errorf("prior after crash = %v, want the original %v", prior, tt.prior)
			}
			if err := l.Rollback(prior); err != nil {
				t.Fatal(err)
			}
			at, err := l.LastConsolidatedAt()
			if err != nil || !at.Equal(tt.prior) {
				t.Errorf("LastConsolidatedAt after recovery = %v, %v, want %v", at, err, tt.prior)
			}
		})
	}
}

// TestStaleRecordIgnored: a guard record left by a dead dream no longer
// applies once another agent has since taken and completed the lock.
func TestStaleRecordIgnored(t *testing.T) {
	f := newFixture(t)
	l := f.lock()
	mustAcquire(t, l)
	l.mu.Lock()
	l.h.file.Close()
	l.h = nil
	l.mu.Unlock()
	completed := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	f.write(t, nil, completed) // a foreign agent reclaimed and completed
	prior := mustAcquire(t, l)
	if !prior.Equal(completed) {
		t.Errorf("prior = %v, want the foreign completion %v", prior, completed)
	}
	if err := l.Complete(); err != nil {
		t.Fatal(err)
	}
}

func TestFmtAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{42 * time.Second, "42s"},
		{12 * time.Minute, "12m"},
		{3*time.Hour + 59*time.Minute, "3h"},
		{72 * time.Hour, "3d"},
	}
	for _, tt := range tests {
		if got := fmtAge(tt.d); got != tt.want {
			t.Errorf("fmtAge(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestOwnPIDWithoutGuardIsReclaimable: a lock body naming this process's own
// PID, with a fresh mtime and no guard record, was left by an earlier process
// that had the same PID (PIDs repeat across container restarts). This process
// holds no Lock, and the guard's flock shows no other Lock in it does, so the
// body cannot name a live holder: TryAcquire must not yield to itself for an
// hour, keeping the time gate closed.
func TestOwnPIDWithoutGuardIsReclaimable(t *testing.T) {
	if !guardSupported {
		t.Skip("no flock on this system")
	}
	f := newFixture(t)
	left := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	f.write(t, []byte(self), left)
	l := f.lock()
	prior, err := l.TryAcquire()
	if err != nil {
		t.Fatalf("TryAcquire against our own stale pid = %v", err)
	}
	if !prior.Equal(left) {
		t.Errorf("prior = %v, want %v", prior, left)
	}
	if err := l.Rollback(prior); err != nil {
		t.Fatal(err)
	}
}
