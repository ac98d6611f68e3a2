package lock

import (
	"bytes"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestLockCreatesNoOtherFiles watches the memory dir with inotify through a
// whole acquire / complete / acquire / rollback cycle: the lock must create
// no file but .consolidate-lock there. A temporary lock file (as a
// rename-based write makes) is what another process's recovery, cleaning up
// temp files, removed under a contender, failing it with exit 1; and the
// only file dream may keep in the memory dir is the lock itself.
func TestLockCreatesNoOtherFiles(t *testing.T) {
	f := newFixture(t)
	f.write(t, nil, time.Now().Add(-30*time.Hour))
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, f.memDir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_MOVED_FROM); err != nil {
		t.Fatal(err)
	}
	l := f.lock()
	mustAcquire(t, l)
	if err := l.Complete(); err != nil {
		t.Fatal(err)
	}
	prior := mustAcquire(t, l)
	if err := l.Rollback(prior); err != nil {
		t.Fatal(err)
	}
	var names []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			names = append(names, string(bytes.TrimRight(name, "\x00")))
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
	for _, n := range names {
		if n != FileName {
			t.Errorf("the lock created or renamed %q in the memory dir", n)
		}
	}
}
