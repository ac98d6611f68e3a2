package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/dreamkit/dream/llm/llmtest"
)

// Issue 9, class 8: a dream killed halfway through renaming its files is
// rolled forward by the next process, and the history records that under
// the dream it belongs to, undoable by its id — not as hand edits. (On the
// original code the next dream recorded the rolled-forward files as a
// "hand edits" entry and `dream undo` of the dream found nothing.)
func TestRollForwardRecordedUnderItsDream(t *testing.T) {
	t.Parallel()
	bin := crashBinary(t)
	w, script := crashWorld(t)
	pre := memHash(t, w.mem)
	srv := llmtest.NewServer(script...)
	defer srv.Close()
	cmd := exec.Command(bin, append([]string{"run", "--json"}, w.locFlags()...)...)
	cmd.Env = append(append(append([]string{}, w.env...), modelEnv("anthropic", srv.URL, false)...), "DREAM_CRASH_AT=commit:rename:2")
	cmd.Run()
	if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() {
		t.Fatalf("the dream was not killed at commit:rename:2 (exit %d)", cmd.ProcessState.ExitCode())
	}
	tasks := decodeJSON[[]struct {
		ID string `json:"id"`
	}](t, w.dream(nil, append([]string{"tasks", "--json"}, w.locFlags()...)...))
	if len(tasks) != 1 {
		t.Fatalf("tasks = %+v", tasks)
	}
	id := tasks[0].ID
	if r := w.dream(nil, append([]string{"status", "--json"}, w.locFlags()...)...); r.code != 0 {
		t.Fatalf("status:\n%s", r)
	}
	if memHash(t, w.mem) == pre {
		t.Fatal("the interrupted commit was not rolled forward")
	}
	log := decodeJSON[[]struct {
		ID     string `json:"id"`
		Kind   string `json:"kind"`
		Status string `json:"status"`
		Files  []struct {
			Path string `json:"path"`
		} `json:"files"`
	}](t, w.dream(nil, append([]string{"log", "--json"}, w.locFlags()...)...))
	if len(log) == 0 || log[0].ID != id || log[0].Kind != "dream" || len(log[0].Files) != 6 {
		t.Fatalf("newest history entry = %+v; want dream %s with its 6 files", log, id)
	}
	for _, e := range log[1:] {
		if e.Kind == "hand" && len(e.Files) > 0 && !strings.HasPrefix(e.ID, "hand-") {
			t.Errorf("unexpected entry %+v", e)
		}
	}
	if r := w.dream(nil, append([]string{"undo", id}, w.locFlags()...)...); r.code != 0 {
		t.Fatalf("undo of the recovered dream:\n%s", r)
	}
	if memHash(t, w.mem) != pre {
		t.Error("undo of the recovered dream did not restore the memory")
	}
}
