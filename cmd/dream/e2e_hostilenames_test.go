package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// TestRunModelDreamBadPathsAreToolErrors is issue 28's over-long path
// that was answered "Created" and then sank the dream at commit, and its
// Build.md beside build.md: against the fake model server, a write of a
// 4,400-byte path and a write of BUILD.md are tool errors the model reads,
// and the dream goes on and lands its good edits.
func TestRunModelDreamBadPathsAreToolErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	long := strings.Repeat("deep-directory-name/", 220) + "note.md"
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": long, "content": "# Note\n\nsomewhere deep\n"}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "BUILD.md", "content": "# Build\n\nanother spelling\n"}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{
			"file_path": "testing.md",
			"content":   "---\nname: testing\ndescription: how to run the tests\ntype: project\n---\n\nThe tests run with go test.\n",
		}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": filepath.Join(w.mem, "MEMORY.md")}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "edit", Input: map[string]any{
			"file_path":  "MEMORY.md",
			"old_string": "- [Build](build.md) — how the project builds\n",
			"new_string": "- [Build](build.md) — how the project builds\n- [Testing](testing.md) — how to run the tests\n",
		}}}},
		llmtest.Turn{Text: "Added a testing memory and indexed it."},
	)
	defer srv.Close()
	r := w.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	if r.code != 0 {
		t.Fatalf("dream run failed:\n%s", r)
	}
	rep := decodeJSON[dream.Report](t, r)
	if rep.Status != "completed" || strings.Join(rep.FilesTouched, ",") != "MEMORY.md,testing.md" {
		t.Fatalf("report: status %q, files %v\n%s", rep.Status, rep.FilesTouched, r)
	}
	// What the model read back for each bad call.
	reqs := srv.Requests()
	for i, want := range map[int]string{1: "path too long", 2: "collides with the existing"} {
		if i >= len(reqs) || !strings.Contains(lastToolResult(t, reqs[i].Body), want) {
			t.Errorf("request %d does not carry the tool error %q", i+1, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.mem, "MEMORY.md")); !strings.Contains(string(b), "[Testing](testing.md)") {
		t.Errorf("the index edit did not land:\n%s", b)
	}
	entries, _ := os.ReadDir(w.mem)
	for _, e := range entries {
		if e.Name() == "BUILD.md" || e.Name() == "deep-directory-name" {
			t.Errorf("%s was created", e.Name())
		}
	}
}

// lastToolResult is the last tool_result block of an Anthropic request,
// as JSON, which must be an error.
func lastToolResult(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("request body: %v", err)
	}
	var blocks []map[string]any
	_ = json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks)
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i]["type"] == "tool_result" {
			if blocks[i]["is_error"] != true {
				t.Errorf("tool result is not an error: %v", blocks[i])
			}
			b, _ := json.Marshal(blocks[i])
			return string(b)
		}
	}
	return ""
}

// TestControlCharactersNeverReachTheTerminal: a memory file whose name
// holds escape sequences (one that sets the terminal's title, one that
// clears the screen), and an index line that does, are shown as \x escapes
// in the run's account, the log and the file lists of show; they once went
// out raw and drove the user's terminal.
func TestControlCharactersNeverReachTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	evil := "\x1b]0;PWNED\x07\x1b[2Jevil.md"
	w.write(w.mem, evil, "---\nname: evil\ndescription: a planted name\ntype: project\n---\n\nNothing to see.\n")
	index, err := os.ReadFile(filepath.Join(w.mem, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	w.write(w.mem, "MEMORY.md", string(index)+"- [Esc](\x1b[41mgone.md) — a \x1b[5mpointer\n")
	run := w.dream(nil, append([]string{"run"}, w.locFlags()...)...)
	if run.code != 0 {
		t.Fatalf("run: %s", run)
	}
	log := w.dream(nil, append([]string{"log"}, w.locFlags()...)...)
	var rep []dream.HistoryEntry
	if err := json.Unmarshal([]byte(w.dream(nil, append([]string{"log", "--json"}, w.locFlags()...)...).stdout), &rep); err != nil || len(rep) == 0 {
		t.Fatalf("log --json: %v", err)
	}
	show := w.dream(nil, append([]string{"show", rep[0].ID}, w.locFlags()...)...)
	files, _, _ := strings.Cut(show.stdout, "\n\n") // the file list; the diff after it is the patch, as is
	for name, out := range map[string]string{"run": run.stdout + run.stderr, "log": log.stdout + log.stderr, "show": files} {
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("dream %s wrote a raw control character:\n%q", name, out)
		}
	}
	if !strings.Contains(run.stdout+log.stdout, `\x1b`) {
		t.Errorf("the planted name is not shown escaped:\n%s\n%s", run, log)
	}
}
