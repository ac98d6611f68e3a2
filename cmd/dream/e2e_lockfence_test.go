package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// startSeedsWriter starts a real process that takes the lock the way the
// seeds describe (write your PID into .consolidate-lock, in place, as
// Node's writeFile does) and then stays alive, as an agent mid-dream would.
// It returns the process's PID once its PID is in the lock body.
func startSeedsWriter(t *testing.T, lockPath string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", `printf %s "$$" > "$1" && echo ok && exec sleep 120`, "sh", lockPath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ok" {
		t.Fatalf("seeds writer said %q", line)
	}
	return cmd.Process.Pid
}

// TestLockTakenOverMidDreamDoesNotLand: another agent writes its live PID
// into the lock while the model is answering. The dream must not commit:
// exit 1, "lock taken over by PID N", the memory unchanged, and the other
// agent's lock body and mtime left exactly as it wrote them.
func TestLockTakenOverMidDreamDoesNotLand(t *testing.T) {
	t.Parallel()
	for _, review := range []bool{false, true} {
		name := "commit"
		if review {
			name = "review"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			const wait = 3 * time.Second
			script := []llmtest.Turn{
				{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": filepath.Join(w.mem, "MEMORY.md")}}}},
				{Delay: wait, Calls: []llmtest.Call{{Name: "write", Input: map[string]any{
					"file_path": "testing.md",
					"content":   "---\nname: testing\ndescription: how to run the tests\ntype: project\n---\n\nRun `go test ./...`.\n",
				}}}},
				{Text: "Added a testing memory."},
			}
			srv := llmtest.NewServer(script...)
			defer srv.Close()
			memBefore := snapshot(t, w.mem)

			args := append([]string{"run", "--json"}, w.locFlags()...)
			if review {
				args = append(args, "--review")
			}
			done := make(chan result, 1)
			go func() { done <- w.dream(modelEnv("anthropic", srv.URL, false), args...) }()

			// While the second request is held by the server, the other
			// agent takes the lock.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for len(srv.Requests()) < 2 {
				select {
				case r := <-done:
					t.Fatalf("the dream ended before the takeover:\n%s", r)
				case <-ctx.Done():
					t.Fatal("the dream never sent its second request")
				case <-time.After(5 * time.Millisecond):
				}
			}
			lockPath := filepath.Join(w.mem, ".consolidate-lock")
			pid := startSeedsWriter(t, lockPath)
			fi, err := os.Stat(lockPath)
			if err != nil {
				t.Fatal(err)
			}
			theirs := fi.ModTime()

			r := <-done
			if r.code != 1 {
				t.Fatalf("exit %d, want 1 (failed):\n%s", r.code, r)
			}
			rep := decodeJSON[dream.Report](t, r)
			want := "lock taken over by PID " + strconv.Itoa(pid)
			if rep.Status != dream.StatusFailed || !strings.Contains(rep.Error, want) {
				t.Errorf("report status %q error %q, want failed with %q", rep.Status, rep.Error, want)
			}
			if memAfter := snapshot(t, w.mem); len(memAfter) != len(memBefore) || memAfter["MEMORY.md"] != memBefore["MEMORY.md"] {
				t.Errorf("the dream landed after losing the lock: %v", keys(memAfter))
			}
			body, err := os.ReadFile(lockPath)
			if err != nil || string(body) != strconv.Itoa(pid) {
				t.Errorf("the other holder's body became %q (%v), want %d", body, err, pid)
			}
			if fi, err := os.Stat(lockPath); err != nil || !fi.ModTime().Equal(theirs) {
				t.Errorf("the other holder's mtime moved: %v %v", fi.ModTime(), err)
			}
			// Nothing is waiting for review either.
			if review {
				if d := w.dream(nil, append([]string{"diff", rep.TaskID}, w.locFlags()...)...); d.code == 0 {
					t.Errorf("a lost review run left a staged change:\n%s", d)
				}
			}
		})
	}
}

// TestOneWinnerAcrossStateDirs: dream processes with different
// XDG_STATE_HOME (two users, a container, a second config) start at once on
// one memory dir. Exactly one dreams; every other one exits 3 (held) having
// sent nothing to any model. Their state dirs share nothing, so only the
// flock on the lock file itself can tell them apart.
func TestOneWinnerAcrossStateDirs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const procs = 6
	srv := llmtest.NewServer(
		llmtest.Turn{Delay: 3 * time.Second, Text: "Nothing to change."},
		llmtest.Turn{Text: "a second winner"},
	)
	defer srv.Close()
	results := make(chan result, procs)
	start := make(chan struct{})
	for i := range procs {
		state := filepath.Join(w.root, "xdg-state-"+strconv.Itoa(i))
		env := append(modelEnv("anthropic", srv.URL, false), "XDG_STATE_HOME="+state)
		go func() {
			<-start
			results <- w.dream(env, "run", "--json", "--memory-dir", w.mem, "--sessions-dir", w.sessions, "--repo", w.repo)
		}()
	}
	close(start)
	won, held := 0, 0
	for range procs {
		r := <-results
		switch r.code {
		case 0:
			won++
		case 3:
			held++
		default:
			t.Errorf("a contender failed:\n%s", r)
		}
	}
	if won != 1 || held != procs-1 {
		t.Errorf("%d winner(s) and %d held, want 1 and %d", won, held, procs-1)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model request(s), want the winner's 1", n)
	}
}
