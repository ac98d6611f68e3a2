//go:build unix

package lock

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVerifyDetectsTakeover: every way another agent can take the lock file
// over mid-dream is seen by Verify, named, and left alone by Complete and
// Rollback.
func TestVerifyDetectsTakeover(t *testing.T) {
	other := os.Getppid()
	tests := []struct {
		name     string
		takeover func(t *testing.T, f fixture)
		wantPID  int
		want     string
	}{
		{"seeds agent writes its pid in place", func(t *testing.T, f fixture) {
			if err := os.WriteFile(f.path(), []byte(strconv.Itoa(other)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, other, "lock taken over by PID " + strconv.Itoa(other)},
		{"agent replaces the file by rename", func(t *testing.T, f fixture) {
			tmp := f.path() + ".new"
			if err := os.WriteFile(tmp, []byte(self), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, f.path()); err != nil {
				t.Fatal(err)
			}
		}, 0, "replaced"},
		{"agent completes: empty body", func(t *testing.T, f fixture) {
			if err := os.WriteFile(f.path(), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, 0, "empty body"},
		{"agent rolls back to no file", func(t *testing.T, f fixture) {
			if err := os.Remove(f.path()); err != nil {
				t.Fatal(err)
			}
		}, 0, "removed"},
		{"our pid rewritten later (mtime moved)", func(t *testing.T, f fixture) {
			later := time.Now().Add(3 * time.Second)
			if err := os.Chtimes(f.path(), later, later); err != nil {
				t.Fatal(err)
			}
		}, 0, "rewritten"},
		{"lock path turned into a directory", func(t *testing.T, f fixture) {
			if err := os.Remove(f.path()); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(f.path(), 0o755); err != nil {
				t.Fatal(err)
			}
		}, 0, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			l := f.lock()
			prior := mustAcquire(t, l)
			if err := l.Verify(); err != nil {
				t.Fatalf("Verify right after acquiring: %v", err)
			}
			tt.takeover(t, f)
			before := lockSnapshot(t, f)
			err := l.Verify()
			var lost *LostError
			if !errors.Is(err, ErrLost) || !errors.As(err, &lost) {
				t.Fatalf("Verify after takeover = %v, want a *LostError", err)
			}
			if lost.PID != tt.wantPID || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Verify = %q (pid %d), want pid %d and %q", err, lost.PID, tt.wantPID, tt.want)
			}
			if !l.Held() {
				t.Error("Verify must not release: the caller rolls back first")
			}
			if err := l.Rollback(prior); !errors.Is(err, ErrLost) {
				t.Errorf("Rollback after takeover = %v, want ErrLost", err)
			}
			if l.Held() {
				t.Error("Held() after a lost Rollback")
			}
			if after := lockSnapshot(t, f); after != before {
				t.Errorf("the new holder's lock file was touched:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// lockSnapshot describes the lock path (kind, body, mtime) for comparisons.
func lockSnapshot(t *testing.T, f fixture) string {
	t.Helper()
	fi, err := os.Lstat(f.path())
	if errors.Is(err, os.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		return fi.Mode().String() + " " + fi.ModTime().String()
	}
	return strconv.Quote(f.body(t)) + " " + fi.ModTime().String()
}

// TestVerifyWhenNotHeld: Verify on a Lock that holds nothing says so.
func TestVerifyWhenNotHeld(t *testing.T) {
	if err := newFixture(t).lock().Verify(); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Verify = %v, want ErrNotHeld", err)
	}
}

// TestHostileLockFileFailsClosed: a directory or a FIFO at the lock path is
// reported, never opened for writing, never replaced, and never taken; the
// FIFO must not block.
func TestHostileLockFileFailsClosed(t *testing.T) {
	for _, tt := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "a directory"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a FIFO"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if err := tt.make(f.path()); err != nil {
				t.Fatal(err)
			}
			l := f.lock()
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, err := l.Inspect(); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Inspect = %v, want an error naming %q", err, tt.want)
				}
				if _, err := l.TryAcquire(); err == nil || errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("TryAcquire = %v, want a plain error naming %q", err, tt.want)
				}
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the lock blocked on a hostile lock file")
			}
			if l.Held() {
				t.Error("Held() after refusing")
			}
			if fi, err := os.Lstat(f.path()); err != nil || fi.Mode().IsRegular() {
				t.Errorf("the hostile file was replaced: %v %v", fi, err)
			}
		})
	}
}

// TestUnreadableLockFailsClosed: a lock body this process may not read is
// never taken over. Root reads everything, so under root the check runs in
// a child process with an unprivileged uid.
func TestUnreadableLockFailsClosed(t *testing.T) {
	f := newFixture(t)
	f.write(t, []byte("4242"), time.Now().Add(-2*time.Hour))
	if err := os.Chmod(f.path(), 0); err != nil {
		t.Fatal(err)
	}
	before := lockSnapshot(t, f)
	if os.Geteuid() != 0 {
		_, err := f.lock().TryAcquire()
		if err == nil || errors.Is(err, ErrHeld) {
			t.Fatalf("TryAcquire of an unreadable lock = %v, want a plain error", err)
		}
	} else {
		out, err := runAsNobody(t, f, "try")
		if err == nil || !strings.Contains(out, "permission denied") {
			t.Fatalf("unprivileged TryAcquire of an unreadable lock: %v\n%s", err, out)
		}
	}
	if after := lockSnapshot(t, f); after != before {
		t.Errorf("the unreadable lock changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestOtherUsersLock: a lock file this user may read but not write (another
// user's, on a shared memory dir) is never taken; while that user's dream
// holds it, the answer is "held" (exit 3 for dream run), not a failure.
func TestOtherUsersLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as two users")
	}
	f := newFixture(t)
	f.write(t, nil, time.Now().Add(-30*time.Hour))
	out, err := runAsNobody(t, f, "try")
	if err == nil || !strings.Contains(out, "permission denied") || !strings.Contains(out, "group-writable") {
		t.Fatalf("nobody acquiring root's idle lock: %v\n%s", err, out)
	}
	holder := startHolder(t, f.memDir, f.guard)
	out, err = runAsNobody(t, f, "try")
	if err == nil || !strings.Contains(out, "is held by a dream process (pid "+strconv.Itoa(holder.Process.Pid)+")") {
		t.Fatalf("nobody acquiring root's held lock: %v\n%s", err, out)
	}
	if got := f.body(t); got != strconv.Itoa(holder.Process.Pid) {
		t.Errorf("body = %q", got)
	}
}
