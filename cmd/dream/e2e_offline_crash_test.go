package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/dreamkit/dream"
)

// offlineCrashWorld is a memory the offline engine changes in four files
// (an exact duplicate in each) and leaves alone in two, so its commit has
// four files to die between.
func offlineCrashWorld(t *testing.T) *world {
	w := newWorld(t)
	for i := 0; i < 4; i++ {
		w.write(w.mem, fmt.Sprintf("topic%d.md", i), fmt.Sprintf("---\nname: topic%d\ndescription: topic %d\ntype: reference\n---\n\n## Facts\n\n- Fact number %d.\n- 第%d条事实。\n- Fact number %d.\n", i, i, i, i, i))
	}
	w.write(w.mem, "build.md", "---\nname: build\ndescription: how it builds\ntype: reference\n---\n\n1. Run `make`.\n2. Run `make test`.\n")
	w.write(w.mem, "MEMORY.md", "# Memory\n\n- [Build](build.md) — how the project builds\n- [T0](topic0.md) — t0\n- [T1](topic1.md) — t1\n- [T2](topic2.md) — t2\n- [T3](topic3.md) — t3\n")
	return w
}

// TestOfflineCrashAnywhereRecovers is TestCrashAnywhereRecovers for the
// offline engine on its linked staging: SIGKILLed at every point of Begin and
// of the commit, the next `dream status` leaves the memory exactly the pre-
// or the post-dream tree, the time gate open and no temp file behind, and
// the next dream runs.
func TestOfflineCrashAnywhereRecovers(t *testing.T) {
	t.Parallel()
	bin := crashBinary(t)
	w0 := offlineCrashWorld(t)
	pre := memHash(t, w0.mem)
	if r := w0.dream(nil, append([]string{"run", "--json", "--provider", "offline"}, w0.locFlags()...)...); r.code != 0 {
		t.Fatalf("uncrashed run:\n%s", r)
	}
	post := memHash(t, w0.mem)
	if post == pre {
		t.Fatal("the offline dream changes nothing")
	}
	points := []string{"begin:done", "commit:record", "commit:synced", "commit:marked"}
	for i := 1; i <= 4; i++ {
		points = append(points, fmt.Sprintf("commit:tmp:%d", i), fmt.Sprintf("commit:rename:%d", i))
	}
	for _, p := range points {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := offlineCrashWorld(t)
			if memHash(t, w.mem) != pre {
				t.Fatal("crash worlds differ")
			}
			cmd := exec.Command(bin, append([]string{"run", "--json", "--provider", "offline"}, w.locFlags()...)...)
			cmd.Env = append(append([]string{}, w.env...), "DREAM_CRASH_AT="+p)
			cmd.Run()
			if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() {
				t.Fatalf("the dream was not killed at %s (exit %d): is the crash point reached?", p, cmd.ProcessState.ExitCode())
			}
			st := decodeJSON[dream.StatusReport](t, w.dream(nil, append([]string{"status", "--json"}, w.locFlags()...)...))
			if got := memHash(t, w.mem); got != pre && got != post {
				t.Fatalf("after a crash at %s the memory is a mix:\n%s\npre:\n%s\npost:\n%s", p, got, pre, post)
			}
			if st.Next == "time" || st.LastConsolidatedAt != nil || st.Lock.Held {
				t.Errorf("after a crash at %s: next %q last %v lock %+v", p, st.Next, st.LastConsolidatedAt, st.Lock)
			}
			entries, _ := os.ReadDir(w.mem)
			for _, e := range entries {
				if len(e.Name()) > 11 && e.Name()[:11] == ".dream-tmp-" {
					t.Errorf("temp file left in the memory dir: %s", e.Name())
				}
			}
			if r := w.dream(nil, append([]string{"run", "--json", "--provider", "offline"}, w.locFlags()...)...); r.code != 0 {
				t.Fatalf("the dream after recovery failed:\n%s", r)
			}
			if got := memHash(t, w.mem); got != post {
				t.Errorf("the dream after recovery left\n%s\nwant the post tree\n%s", got, post)
			}
		})
	}
}
