package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// crashBinary is dream built with the dreamcrashtest tag, whose journal
// kills the process at the crash point named by DREAM_CRASH_AT; see
// buildBinaries.
func crashBinary(t *testing.T) string {
	t.Helper()
	if crashBin == "" {
		t.Fatal("the crash binary was not built")
	}
	return crashBin
}

// crashWorld is a world with six memory files and a script that writes
// four topics and edits the index: enough files that a commit has many
// points to die at.
func crashWorld(t *testing.T) (*world, []llmtest.Turn) {
	w := newWorld(t)
	for i := 0; i < 4; i++ {
		w.write(w.mem, fmt.Sprintf("topic%d.md", i), fmt.Sprintf("---\nname: topic%d\ndescription: topic %d\ntype: reference\n---\n\nFact number %d.\n", i, i, i))
	}
	w.write(w.mem, "MEMORY.md", "# Memory\n\n- [Build](build.md) — how the project builds\n- [T0](topic0.md) — t0\n- [T1](topic1.md) — t1\n- [T2](topic2.md) — t2\n- [T3](topic3.md) — t3\n")
	var script []llmtest.Turn
	script = append(script, llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": filepath.Join(w.mem, "MEMORY.md")}}}})
	for i := 0; i < 4; i++ {
		script = append(script, llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": filepath.Join(w.mem, fmt.Sprintf("topic%d.md", i))}}}})
		script = append(script, llmtest.Turn{Calls: []llmtest.Call{{Name: "edit", Input: map[string]any{
			"file_path": fmt.Sprintf("topic%d.md", i), "old_string": fmt.Sprintf("Fact number %d.", i), "new_string": fmt.Sprintf("Fact number %d, confirmed on 2026-11-29.", i),
		}}}})
	}
	script = append(script,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "new.md", "content": "---\nname: new\ndescription: new\ntype: project\n---\n\nA new fact.\n"}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "edit", Input: map[string]any{"file_path": "MEMORY.md", "old_string": "- [T3](topic3.md) — t3\n", "new_string": "- [T3](topic3.md) — t3\n- [New](new.md) — new\n"}}}},
		llmtest.Turn{Text: "Confirmed four facts and added one."},
	)
	return w, script
}

func memHash(t *testing.T, dir string) string {
	return treeHash(t, dir, func(rel string) bool { return rel == ".consolidate-lock" })
}

// TestCrashAnywhereRecovers SIGKILLs a scripted dream at every commit point
// of the journal and at several points of the agent loop. After a fresh
// `dream status` the memory must be byte-for-byte the pre-dream or the
// post-dream tree, never a mix, and the time gate open again.
func TestCrashAnywhereRecovers(t *testing.T) {
	t.Parallel()
	bin := crashBinary(t)

	// The post-dream tree, from an uncrashed run.
	w0, script := crashWorld(t)
	pre := memHash(t, w0.mem)
	srv0 := llmtest.NewServer(script...)
	defer srv0.Close()
	if r := w0.dream(modelEnv("anthropic", srv0.URL, false), append([]string{"run", "--json"}, w0.locFlags()...)...); r.code != 0 {
		t.Fatalf("uncrashed run:\n%s", r)
	}
	post := memHash(t, w0.mem)
	if post == pre {
		t.Fatal("the scripted dream changes nothing")
	}

	type point struct {
		name    string
		crashAt string // journal crash point, or "" to kill after afterRequests model requests
		after   int
	}
	var points []point
	for i := 1; i <= 6; i++ {
		points = append(points, point{name: fmt.Sprintf("stage-copy-%d", i), crashAt: fmt.Sprintf("begin:copied:%d", i)})
	}
	points = append(points, point{name: "staged", crashAt: "begin:done"}, point{name: "commit-record", crashAt: "commit:record"})
	for i := 1; i <= 6; i++ {
		points = append(points,
			point{name: fmt.Sprintf("commit-tmp-%d", i), crashAt: fmt.Sprintf("commit:tmp:%d", i)},
			point{name: fmt.Sprintf("commit-rename-%d", i), crashAt: fmt.Sprintf("commit:rename:%d", i)})
	}
	points = append(points, point{name: "commit-synced", crashAt: "commit:synced"}, point{name: "commit-marked", crashAt: "commit:marked"})
	for _, k := range []int{1, 2, 4, 6, 8, 10} {
		points = append(points, point{name: fmt.Sprintf("agent-request-%d", k), after: k})
	}

	var killedAt atomic.Int32
	t.Run("points", func(t *testing.T) {
		for _, p := range points {
			t.Run(p.name, func(t *testing.T) {
				// Each point waits on child processes, fsync and the scripted
				// server, not on this process's CPU: run them side by side.
				t.Parallel()
				w, script := crashWorld(t)
				if memHash(t, w.mem) != pre {
					t.Fatal("crash worlds differ")
				}
				// When the test kills by the clock, each answer waits long
				// enough that the kill lands while that request is in flight.
				if p.crashAt == "" {
					for i := range script {
						script[i].Delay = 200 * time.Millisecond
					}
				}
				srv := llmtest.NewServer(script...)
				defer srv.Close()
				env := append(modelEnv("anthropic", srv.URL, false), "DREAM_CRASH_AT="+p.crashAt)
				cmd := exec.Command(bin, append([]string{"run", "--json"}, w.locFlags()...)...)
				cmd.Env = append(append([]string{}, w.env...), env...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if p.crashAt == "" {
					waitFor(t, 30*time.Second, "model requests", func() bool { return len(srv.Requests()) >= p.after })
					cmd.Process.Signal(syscall.SIGKILL)
				}
				cmd.Wait()
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ws.Signaled() {
					t.Fatalf("the dream was not killed at %s (exit %d): is the crash point reached?", p.name, cmd.ProcessState.ExitCode())
				}
				killedAt.Add(1)

				st := decodeJSON[dream.StatusReport](t, w.dream(nil, append([]string{"status", "--json"}, w.locFlags()...)...))
				got := memHash(t, w.mem)
				if got != pre && got != post {
					t.Fatalf("after a crash at %s the memory is a mix:\n%s\npre:\n%s\npost:\n%s", p.name, got, pre, post)
				}
				if st.Next == "time" || st.LastConsolidatedAt != nil {
					t.Errorf("after a crash at %s the time gate is closed: next %q last %v (recovered %v)", p.name, st.Next, st.LastConsolidatedAt, st.Recovered)
				}
				if st.Lock.Held {
					t.Errorf("the dead holder still holds the lock: %+v", st.Lock)
				}
				if entries, _ := os.ReadDir(w.mem); true {
					for _, e := range entries {
						if len(e.Name()) > 11 && e.Name()[:11] == ".dream-tmp-" {
							t.Errorf("temp file left in the memory dir: %s", e.Name())
						}
					}
				}
				// The files the commit replaced, kept to be freed after
				// it, went with the recovery.
				filepath.WalkDir(w.state, func(path string, de os.DirEntry, err error) error {
					if err == nil && strings.HasPrefix(de.Name(), ".replaced-") {
						t.Errorf("after a crash at %s the replaced files are left: %s", p.name, path)
					}
					return err
				})
				// The next dream runs normally.
				srv2 := llmtest.NewServer(llmtest.Turn{Text: "Nothing to do."})
				defer srv2.Close()
				if r := w.dream(modelEnv("anthropic", srv2.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...); r.code != 0 {
					t.Fatalf("the dream after recovery failed:\n%s", r)
				}
			})
		}
	})
	t.Logf("SIGKILLed the dream at %d distinct points; every recovery left the pre or the post tree", killedAt.Load())
	if killedAt.Load() < 20 {
		t.Errorf("only %d crash points exercised, want at least 20", killedAt.Load())
	}
}
