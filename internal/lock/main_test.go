//go:build unix

package lock

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/raceenv"
)

// The test binary re-executes itself as helper processes; the environment
// variable selects what the child does instead of running tests.
const (
	helperEnv   = "DREAM_LOCK_TEST_HELPER"
	envMemDir   = "DREAM_LOCK_TEST_MEMDIR"
	envGuard    = "DREAM_LOCK_TEST_GUARD"
	envLog      = "DREAM_LOCK_TEST_LOG"
	envRounds   = "DREAM_LOCK_TEST_ROUNDS"
	envDeadline = "DREAM_LOCK_TEST_DEADLINE"
	// envOwnState gives each contender its own guard file, as dream
	// processes with different XDG_STATE_HOME (two users, a container, a
	// second config) have.
	envOwnState = "DREAM_LOCK_TEST_OWN_STATE"
)

func TestMain(m *testing.M) {
	raceenv.Setenv() // the helper processes inherit it: no second at each exit
	switch mode := os.Getenv(helperEnv); mode {
	case "":
		os.Exit(m.Run())
	case "exit":
		os.Exit(0)
	case "hold":
		os.Exit(helperHold())
	case "try":
		if _, err := New(os.Getenv(envMemDir), os.Getenv(envGuard)).TryAcquire(); err != nil {
			fmt.Println("acquire:", err)
			os.Exit(1)
		}
		fmt.Println("acquired")
		os.Exit(0)
	case "race-dream", "race-seeds":
		os.Exit(helperRace(mode == "race-seeds"))
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		os.Exit(2)
	}
}

// helperHold acquires the lock, reports the prior on stdout, and waits to be
// killed (at most a minute, so a broken parent cannot leak it forever).
func helperHold() int {
	l := New(os.Getenv(envMemDir), os.Getenv(envGuard))
	prior, err := l.TryAcquire()
	if err != nil {
		fmt.Fprintln(os.Stderr, "acquire:", err)
		return 1
	}
	fmt.Printf("acquired %s\n", prior.Format(time.RFC3339Nano))
	time.Sleep(time.Minute)
	return 0
}

// startHolder runs a child that acquires the lock and waits; it returns once
// the child holds it. The child is killed at test cleanup if still running.
func startHolder(t *testing.T, memDir, guard string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=hold", envMemDir+"="+memDir, envGuard+"="+guard)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if !strings.HasPrefix(s, "acquired ") {
			t.Fatalf("holder child said %q", s)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("holder child did not acquire within 15s")
	}
	return cmd
}

// runAsNobody runs a helper mode as uid/gid 65534 (the caller is root), on a
// copy of the test binary that user may execute, with f's directories opened
// up to it. It returns the child's output.
func runAsNobody(t *testing.T, f fixture, mode string) (string, error) {
	t.Helper()
	dir := filepath.Dir(f.memDir)
	for d := dir; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{f.memDir, filepath.Dir(f.guard)} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Dir(filepath.Dir(f.guard)), 0o777)
	bin := filepath.Join(dir, "lock.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, envMemDir+"="+f.memDir, envGuard+"="+f.guard)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// deadPID returns the PID of a child process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=exit")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// helperRace contends for the lock for the given number of rounds, logging
// "enter PID" and "exit PID" around each critical section to a shared
// O_APPEND log. seeds selects the agents' write-then-reread acquisition
// instead of this package.
func helperRace(seeds bool) int {
	memDir, guard := os.Getenv(envMemDir), os.Getenv(envGuard)
	rounds, _ := strconv.Atoi(os.Getenv(envRounds))
	deadlineNS, _ := strconv.ParseInt(os.Getenv(envDeadline), 10, 64)
	deadline := time.Unix(0, deadlineNS)
	logf, err := os.OpenFile(os.Getenv(envLog), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer logf.Close()
	pid := os.Getpid()
	enter := []byte(fmt.Sprintf("enter %d\n", pid))
	exit := []byte(fmt.Sprintf("exit %d\n", pid))
	if os.Getenv(envOwnState) != "" {
		guard = fmt.Sprintf("%s-state-%d/locks/memory.guard", guard, pid)
	}
	l := New(memDir, guard)
	seedPath := l.Path()
	for done := 0; done < rounds; {
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "pid %d: deadline after %d rounds\n", pid, done)
			return 3
		}
		var prior time.Time
		if seeds {
			if !seedsAcquire(seedPath, pid) {
				time.Sleep(backoff())
				continue
			}
		} else {
			var err error
			prior, err = l.TryAcquire()
			if errors.Is(err, ErrHeld) {
				time.Sleep(backoff())
				continue
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "acquire:", err)
				return 2
			}
		}
		if _, err := logf.Write(enter); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		time.Sleep(time.Duration(50+rand.IntN(150)) * time.Microsecond)
		if _, err := logf.Write(exit); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		var rerr error
		switch {
		case seeds:
			rerr = os.WriteFile(seedPath, nil, 0o644) // Complete: empty body, fresh mtime
		case done%2 == 0:
			rerr = l.Complete()
		default:
			rerr = l.Rollback(prior)
		}
		if rerr != nil {
			fmt.Fprintln(os.Stderr, "release:", rerr)
			return 2
		}
		done++
	}
	return 0
}

// seedsAcquire is a faithful reimplementation of the agents' acquisition, for
// comparison only: yield to a live PID in a lock under an hour old, else
// write our PID and win if re-reading it returns our PID.
func seedsAcquire(path string, pid int) bool {
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) < StaleAfter {
		b, _ := os.ReadFile(path)
		if hp, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && hp > 0 && processAlive(hp) {
			return false
		}
	}
	self := strconv.Itoa(pid)
	if err := os.WriteFile(path, []byte(self), 0o644); err != nil {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && strings.TrimSpace(string(b)) == self
}

// backoff is how long a contender waits after losing: long enough that seven
// losers polling do not starve the holder of CPU on a small machine.
func backoff() time.Duration {
	return time.Duration(200+rand.IntN(800)) * time.Microsecond
}
