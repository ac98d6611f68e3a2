package gitsync

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitDaemon serves the bare repositories under base over git:// on
// loopback (`git daemon`), accepting pushes only when push is set. stop
// ends it; the URL stays, so a restarted daemon serves it again.
func gitDaemon(t *testing.T, base string, port int, push bool) (stop func()) {
	t.Helper()
	// git-daemon itself: `git daemon` runs it as a child, which a kill of
	// the parent would leave serving.
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git --exec-path: %v", err)
	}
	args := []string{"--reuseaddr", "--export-all", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path=" + base}
	if push {
		args = append(args, "--enable=receive-pack")
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"), append(args, base)...)
	if err := cmd.Start(); err != nil {
		t.Skipf("git daemon: %v", err)
	}
	stop = func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return stop
		}
	}
	t.Fatal("git daemon did not listen within 10s")
	return nil
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestDaemonRemoteDownAndReadOnly: against a real `git daemon`, a push the
// server refuses is an error that is not ErrRejected (nothing to merge:
// the remote is as it was); a daemon that is down is ErrUnreachable for a
// pull and an "unreachable" state with its error for status, which keeps
// the counts as of the last fetch; once the daemon takes pushes again, the
// commits made meanwhile reach it.
func TestDaemonRemoteDownAndReadOnly(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	gitIn(t, base, "init", "-q", "--bare", "--initial-branch=main", filepath.Join(base, "memory.git"))
	port := freePort(t)
	url := fmt.Sprintf("git://127.0.0.1:%d/memory.git", port)
	m := newMachine(t, url, memoryFiles)

	stop := gitDaemon(t, base, port, false)
	if st := m.repo.Status(ctx); st.State != "remote empty" || st.Next != NextPush || st.Ahead != 1 {
		t.Fatalf("status against a read-only daemon: %+v", st)
	}
	if _, err := m.repo.Push(ctx); err == nil || errors.Is(err, ErrRejected) {
		t.Fatalf("push to a read-only daemon: %v, want a failure that is not a rejection", err)
	}
	stop()

	if _, err := m.repo.Pull(ctx, false); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("pull with the daemon down: %v, want ErrUnreachable", err)
	}
	write(t, filepath.Join(m.mem, "build.md"), memoryFiles["build.md"]+"\n- offline edit\n")
	m.record(t)
	if st := m.repo.Status(ctx); st.State != "unreachable" || st.Error == "" || st.Ahead != 2 {
		t.Fatalf("status with the daemon down: %+v", st)
	}

	gitDaemon(t, base, port, true)
	if n := mustPush(t, m); n != 2 {
		t.Fatalf("pushed %d once the daemon was back, want 2", n)
	}
	if st := m.repo.Status(ctx); st.State != "in sync" {
		t.Fatalf("status after the push: %+v", st)
	}
}
