package journal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/raceenv"
)

// The crash test re-executes this test binary as a helper that runs a real
// dream and kills itself with SIGKILL at one named point, then recovers in
// a fresh process and checks the memory dir is exactly the old tree or the
// new tree.
const (
	envHelper  = "DREAM_JOURNAL_HELPER" // "dream" or "recover"
	envCrashAt = "DREAM_TEST_CRASH_AT"
	envState   = "DREAM_JOURNAL_STATE"
	envMem     = "DREAM_JOURNAL_MEM"
)

func TestMain(m *testing.M) {
	raceenv.Setenv() // the helper processes inherit it: no second at each exit
	if mode := os.Getenv(envHelper); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

// helperMain is the child process. It installs the crash hook only here, in
// the test binary.
func helperMain(mode string) int {
	at := os.Getenv(envCrashAt)
	crashHook = func(point string) {
		if point == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Second) // the signal is delivered; never return
		}
	}
	state, mem := os.Getenv(envState), os.Getenv(envMem)
	var err error
	switch mode {
	case "dream":
		err = helperDream(state, mem, false)
	case "linkdream":
		err = helperDream(state, mem, true)
	case "recover":
		_, err = Recover(state, mem)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// helperDream plays the agent: it writes the dream's edits into staging one
// file at a time, with a crash point after each, then commits. With link
// the staging is linked and each file is written as a FileReplacer runner
// writes it: a new file renamed over the staged one.
func helperDream(state, mem string, link bool) error {
	txn, err := BeginWith(state, mem, "crashdream", Options{LinkUnchanged: link})
	if err != nil {
		return err
	}
	edits := dreamEdits()
	paths := make([]string, 0, len(edits))
	for p := range edits {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for i, p := range paths {
		full := txn.Dir() + "/" + p
		if edits[p] == "" {
			err = os.Remove(full)
		} else {
			if err = os.MkdirAll(full[:len(full)-len(lastElem(p))], 0o755); err == nil {
				err = os.WriteFile(full+".new", []byte(edits[p]), 0o644)
			}
			if err == nil {
				err = os.Rename(full+".new", full)
			}
		}
		if err != nil {
			return err
		}
		crashPoint("agent:write:%d", i+1)
	}
	_, err = txn.Commit()
	return err
}

func lastElem(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// runHelper runs the child and reports whether it was killed at its point.
func runHelper(t *testing.T, mode, state, mem, at string) (killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envCrashAt+"="+at, envState+"="+state, envMem+"="+mem)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	if err != nil {
		t.Fatalf("helper %s (crash at %q): %v\n%s", mode, at, err, out)
	}
	return false
}

func crashPoints() (pre, post []string) {
	for i := 1; i <= 7; i++ {
		pre = append(pre, fmt.Sprintf("begin:copied:%d", i))
	}
	pre = append(pre, "begin:done")
	for i := 1; i <= 8; i++ {
		pre = append(pre, fmt.Sprintf("agent:write:%d", i))
	}
	post = append(post, "commit:record")
	for i := 1; i <= 7; i++ {
		post = append(post, fmt.Sprintf("commit:tmp:%d", i), fmt.Sprintf("commit:rename:%d", i))
	}
	post = append(post, "commit:delete:1", "commit:synced", "commit:marked")
	return pre, post
}

func TestCrashAtEveryPointRecoversWholeTree(t *testing.T) {
	pre, post := crashPoints()
	type tc struct {
		at, recoverAt string // recoverAt: also crash the first recovery there
		wantPost      bool
		link          bool // a linked staging, whose commit links its files into place
	}
	var cases []tc
	for _, p := range pre {
		cases = append(cases, tc{at: p})
	}
	for _, p := range post {
		cases = append(cases, tc{at: p, wantPost: true})
	}
	for _, p := range post {
		cases = append(cases, tc{at: p, wantPost: true, link: true})
	}
	// Crashing again during recovery must still converge.
	cases = append(cases,
		tc{at: "commit:tmp:4", recoverAt: "commit:rename:1", wantPost: true, link: true},
		tc{at: "commit:rename:2", recoverAt: "recover:forward:crashdream", wantPost: true},
		tc{at: "commit:tmp:4", recoverAt: "commit:rename:1", wantPost: true},
		tc{at: "commit:rename:6", recoverAt: "commit:marked", wantPost: true},
	)
	if len(cases) < 20 {
		t.Fatalf("only %d crash points", len(cases))
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, c := range cases {
		name := c.at
		if c.recoverAt != "" {
			name += "+" + c.recoverAt
		}
		mode := "dream"
		if c.link {
			name, mode = name+"+link", "linkdream"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each case waits mostly on a child process and fsync
			if time.Now().After(deadline) {
				t.Skip("crash test time budget spent")
			}
			state, mem := setup(t)
			if !runHelper(t, mode, state, mem, c.at) {
				t.Fatalf("crash point %q was never reached", c.at)
			}
			if c.recoverAt != "" && !runHelper(t, "recover", state, mem, c.recoverAt) {
				t.Fatalf("recovery crash point %q was never reached", c.recoverAt)
			}
			res, err := Recover(state, mem)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			got := readTree(t, mem)
			preT, postT := preTree(), after(preTree(), dreamEdits())
			switch {
			case sameTree(got, postT):
				if !c.wantPost {
					t.Errorf("crash before the commit record rolled forward (%+v)", res)
				}
			case sameTree(got, preT):
				if c.wantPost {
					t.Errorf("crash after the commit record was not rolled forward (%+v)", res)
				}
			default:
				t.Fatalf("memory is a mix of old and new: %s (temps %v)", describe(got), tempFiles(got))
			}
			if left := journalEntries(t, state, mem); len(left) != 0 {
				t.Errorf("journal left %v", left)
			}
			if c.wantPost && c.at != "commit:marked" && c.recoverAt != "commit:marked" && !slices.Equal(res.RolledForward, []string{"crashdream"}) {
				t.Errorf("RolledForward = %v", res.RolledForward)
			}
		})
	}
}
