//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// TestFIFOsCannotHangADream is issue 9 class 4 end to end: real FIFOs in
// the repository and the sessions dir, read and grepped by the scripted
// model, with --timeout 5s. Every such call must come back at once as a
// tool error and the dream must complete; before, the first read blocked
// in open(2) and the dream outlived its --timeout.
func TestFIFOsCannotHangADream(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(w.sessions, "a1.jsonl", `{"type":"user","message":{"role":"user","content":"tests run with go test ./..."}}`+"\n")
	fifos := []string{filepath.Join(w.repo, "events.log"), filepath.Join(w.sessions, "live.jsonl")}
	for _, p := range fifos {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		// Release any reader left blocked, so a failure cannot wedge the run.
		t.Cleanup(func() {
			if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		})
	}
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": fifos[0]}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "grep", Input: map[string]any{"pattern": "go test", "path": fifos[1]}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "grep", Input: map[string]any{"pattern": "go test", "path": w.sessions}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "glob", Input: map[string]any{"pattern": "**/*"}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{
			"file_path": "testing.md",
			"content":   "---\nname: testing\ndescription: how to run the tests\ntype: project\n---\n\nRun `go test ./...`.\n",
		}}}},
		llmtest.Turn{Text: "Added a testing memory."},
	)
	defer srv.Close()
	start := time.Now()
	cmd, out, errb := w.start(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json", "--timeout", "5s"}, w.locFlags()...)...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("dream run --timeout 5s still running after 30s (blocked on a FIFO)\nstderr:\n%s", errb)
	}
	took := time.Since(start)
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("dream run exit %d after %v\nstdout:\n%s\nstderr:\n%s", code, took, out, errb)
	}
	var rep dream.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if rep.Status != "completed" || strings.Join(rep.FilesTouched, ",") != "testing.md" {
		t.Errorf("report: status %q files %v", rep.Status, rep.FilesTouched)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("model requests = %d, want 6", len(reqs))
	}
	for i, want := range []string{"named pipe", "named pipe"} {
		if body := string(reqs[i+1].Body); !strings.Contains(body, want) || !strings.Contains(body, `"is_error":true`) {
			t.Errorf("result of FIFO call %d does not say %q as an error", i+1, want)
		}
	}
	if body := string(reqs[3].Body); !strings.Contains(body, "a1.jsonl:1") {
		t.Errorf("grep over the sessions dir did not find the regular transcript")
	}
}
