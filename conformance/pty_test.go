package conformance

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Term is an agent's interactive UI running on a pseudo-terminal, as a
// person would start it: the tests type into it and read the screen's
// text back.
type Term struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File

	mu   sync.Mutex
	raw  bytes.Buffer // everything the UI wrote, escape sequences included
	done chan struct{}
	err  error // the process's exit, once done is closed
}

// StartTerm starts bin with args in dir on a 120x40 terminal under s's
// environment. The process is killed when the test ends if it is still
// running.
func (s *Sandbox) StartTerm(dir, bin string, args ...string) *Term {
	s.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = s.Environ()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		s.t.Fatalf("starting %s on a pty: %v", bin, err)
	}
	tm := &Term{t: s.t, cmd: cmd, ptmx: ptmx, done: make(chan struct{})}
	go tm.pump()
	s.t.Cleanup(func() {
		select {
		case <-tm.done:
		default:
			_ = cmd.Process.Kill()
			<-tm.done
		}
		ptmx.Close()
		if s.t.Failed() {
			s.t.Logf("terminal of %s at the end:\n%s", bin, tm.Text())
		}
	})
	return tm
}

// pump copies the UI's output until the pty closes, then reaps the process.
func (tm *Term) pump() {
	buf := make([]byte, 32<<10)
	for {
		n, err := tm.ptmx.Read(buf)
		if n > 0 {
			tm.mu.Lock()
			tm.raw.Write(buf[:n])
			tm.mu.Unlock()
		}
		if err != nil {
			break
		}
	}
	err := tm.cmd.Wait()
	tm.mu.Lock()
	tm.err = err
	tm.mu.Unlock()
	close(tm.done)
}

// ansi matches the escape sequences a terminal UI draws with (CSI, OSC,
// two-byte escapes) so that Text is what a person reads.
var ansi = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x1b[()][A-Za-z0-9]`)

// Text is everything the UI printed so far with escape sequences removed
// and runs of blanks folded to one space.
func (tm *Term) Text() string {
	tm.mu.Lock()
	s := tm.raw.String()
	tm.mu.Unlock()
	s = ansi.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// Len is how much the UI has printed, to wait only for what comes after.
func (tm *Term) Len() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.raw.Len()
}

// Since is Text of what the UI printed after offset.
func (tm *Term) Since(offset int) string {
	tm.mu.Lock()
	s := tm.raw.String()
	tm.mu.Unlock()
	if offset < len(s) {
		s = s[offset:]
	} else {
		s = ""
	}
	s = ansi.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// WaitFor waits until the UI has printed want after offset, failing the
// test after timeout or when the process exits first.
func (tm *Term) WaitFor(offset int, want string, timeout time.Duration) {
	tm.t.Helper()
	want = strings.Join(strings.Fields(want), " ")
	deadline := time.After(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(tm.Since(offset), want) {
			return
		}
		select {
		case <-deadline:
			tm.t.Fatalf("the terminal did not show %q within %s; it shows:\n%s", want, timeout, tail(tm.Since(offset), 3000))
		case <-tm.done:
			if strings.Contains(tm.Since(offset), want) {
				return
			}
			tm.t.Fatalf("the program exited (%v) before showing %q; it showed:\n%s", tm.err, want, tail(tm.Since(offset), 3000))
		case <-tick.C:
		}
	}
}

// Type sends keys to the UI as a person types them, a little at a time:
// terminal UIs read a paste differently from typing.
func (tm *Term) Type(keys string) {
	tm.t.Helper()
	for _, r := range keys {
		if _, err := io.WriteString(tm.ptmx, string(r)); err != nil {
			tm.t.Fatalf("typing into the terminal: %v", err)
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// Wait waits for the process to exit and returns its exit error.
func (tm *Term) Wait(timeout time.Duration) error {
	tm.t.Helper()
	select {
	case <-tm.done:
		tm.mu.Lock()
		defer tm.mu.Unlock()
		return tm.err
	case <-time.After(timeout):
		return errors.New("the program did not exit within " + timeout.String())
	}
}

// Exited reports whether the process has exited.
func (tm *Term) Exited() bool {
	select {
	case <-tm.done:
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
