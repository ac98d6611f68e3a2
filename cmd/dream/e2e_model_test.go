package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// protocols are the provider × streaming combinations every model test
// drives: both wire protocols, streaming and not.
var protocols = []struct {
	name, provider string
	stream         bool
}{
	{"anthropic", "anthropic", false},
	{"anthropic-stream", "anthropic", true},
	{"openai", "openai", false},
	{"openai-stream", "openai", true},
}

// modelEnv points the binary at the fake server, with the provider's
// default model (a priced one: an unpriced model is refused).
func modelEnv(provider, url string, stream bool) []string {
	env := []string{"DREAM_PROVIDER=" + provider}
	if provider == "anthropic" {
		env = append(env, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	} else {
		env = append(env, "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+url+"/v1")
	}
	if stream {
		env = append(env, "DREAM_STREAM=1")
	}
	return env
}

// successScript is a well-behaved four-phase dream: orient, read, write a
// merged topic, edit the index, then a summary.
func successScript(mem string) []llmtest.Turn {
	return []llmtest.Turn{
		{Calls: []llmtest.Call{{Name: "ls", Input: map[string]any{"path": mem}}}},
		{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": filepath.Join(mem, "MEMORY.md")}}}},
		{Calls: []llmtest.Call{{Name: "grep", Input: map[string]any{"pattern": "go build", "path": "Makefile"}}}},
		{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{
			"file_path": "testing.md",
			"content":   "---\nname: testing\ndescription: how to run the tests\ntype: project\n---\n\nRun `go test ./...` (learned 2026-11-29).\n",
		}}}},
		{Calls: []llmtest.Call{{Name: "edit", Input: map[string]any{
			"file_path":  filepath.Join(mem, "MEMORY.md"),
			"old_string": "- [Build](build.md) — how the project builds\n",
			"new_string": "- [Build](build.md) — how the project builds\n- [Testing](testing.md) — how to run the tests\n",
		}}}},
		{Text: "Added a testing memory and indexed it."},
	}
}

func TestRunModelDreamSucceeds(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			w := newWorld(t)
			srv := llmtest.NewServer(successScript(w.mem)...)
			defer srv.Close()
			r := w.dream(modelEnv(p.provider, srv.URL, p.stream), append([]string{"run", "--json"}, w.locFlags()...)...)
			if r.code != 0 {
				t.Fatalf("dream run failed:\n%s", r)
			}
			rep := decodeJSON[dream.Report](t, r)
			if rep.Status != "completed" || rep.Turns != 6 || rep.ToolCalls != 5 {
				t.Fatalf("report: status %q turns %d tool calls %d\n%s", rep.Status, rep.Turns, rep.ToolCalls, r)
			}
			if strings.Join(rep.FilesTouched, ",") != "MEMORY.md,testing.md" {
				t.Errorf("files_touched = %v", rep.FilesTouched)
			}
			if rep.Usage.InputTokens+rep.Usage.CacheReadInputTokens == 0 || rep.Usage.OutputTokens == 0 {
				t.Errorf("usage not reported: %+v", rep.Usage)
			}
			idx, _ := os.ReadFile(filepath.Join(w.mem, "MEMORY.md"))
			if !strings.Contains(string(idx), "- [Testing](testing.md)") {
				t.Errorf("index not updated:\n%s", idx)
			}
			if b, err := os.ReadFile(filepath.Join(w.mem, ".consolidate-lock")); err != nil || len(b) != 0 {
				t.Errorf("lock after success: %q %v; want an empty body", b, err)
			}
			if n := len(srv.Requests()); n != 6 {
				t.Errorf("model requests = %d, want 6", n)
			}
			for _, req := range srv.Requests() {
				if req.Stream != p.stream {
					t.Errorf("request stream = %v, want %v", req.Stream, p.stream)
				}
			}
			// The audit history has the dream with its real diff.
			lg := w.dream(nil, append([]string{"log", "--json"}, w.locFlags()...)...)
			if lg.code != 0 || !strings.Contains(lg.stdout, rep.TaskID) || !strings.Contains(lg.stdout, "+- [Testing](testing.md)") {
				t.Errorf("dream log does not show the dream's diff:\n%s", lg)
			}
		})
	}
}

// TestMaliciousModelCannotEscape scripts a model that tries every escape
// from the memory dir. Every attempt must come back as a tool error, nothing
// outside the memory dir may change, and the dream still completes.
func TestMaliciousModelCannotEscape(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			w := newWorld(t)
			evil := w.mem + "-evil"
			if err := os.MkdirAll(evil, 0o755); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(w.root, "outside")
			os.MkdirAll(outside, 0o755)
			if err := os.Symlink(outside, filepath.Join(w.mem, "link")); err != nil {
				t.Fatal(err)
			}
			w.write(w.mem, "notes.md", "---\nname: notes\ndescription: notes\ntype: user\n---\n\nnote\n")
			w.write(w.mem, "MEMORY.md", "# Memory\n\n- [Build](build.md) — how the project builds\n- [Notes](notes.md) — notes\n")
			attempts := []llmtest.Call{
				{Name: "write", Input: map[string]any{"file_path": "../outside/pwned.md", "content": "x"}},
				{Name: "write", Input: map[string]any{"file_path": filepath.Join(outside, "abs.md"), "content": "x"}},
				{Name: "write", Input: map[string]any{"file_path": "link/through-symlink.md", "content": "x"}},
				{Name: "write", Input: map[string]any{"file_path": filepath.Join(evil, "sibling.md"), "content": "x"}},
				{Name: "write", Input: map[string]any{"file_path": ".consolidate-lock", "content": "1"}},
				{Name: "write", Input: map[string]any{"file_path": ".CONSOLIDATE-LOCK", "content": "1"}},
				{Name: "write", Input: map[string]any{"file_path": filepath.Join(w.repo, "main.go"), "content": "package evil"}},
				{Name: "edit", Input: map[string]any{"file_path": filepath.Join(w.repo, "Makefile"), "old_string": "all", "new_string": "pwn"}},
				{Name: "write", Input: map[string]any{"file_path": "/etc/dream-pwned", "content": "x"}},
				{Name: "bash", Input: map[string]any{"command": "rm -rf /"}},
				{Name: "write", Input: map[string]any{"file_path": "creds.md", "content": "aws key AKIAZ7QX3PLM4R2TWV6N here\n"}},
				{Name: "write", Input: map[string]any{"file_path": "gh.md", "content": "token ghp_" + strings.Repeat("a1B2", 9) + "\n"}},
				{Name: "write", Input: map[string]any{"file_path": "pem.md", "content": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"}},
				{Name: "edit", Input: map[string]any{"file_path": "notes.md", "old_string": "note", "new_string": "changed"}}, // not read first
			}
			// Each turn pairs an attempt with honest work (a read that
			// succeeds), as a model that goes wrong midway would: a turn of
			// nothing but refusals is the loop detector's business.
			var script []llmtest.Turn
			for i, c := range attempts {
				honest := llmtest.Call{Name: "grep", Input: map[string]any{"pattern": fmt.Sprintf("Build|step %d", i), "path": w.mem}}
				script = append(script, llmtest.Turn{Calls: []llmtest.Call{c, honest}})
			}
			script = append(script, llmtest.Turn{Text: "Done."})
			srv := llmtest.NewServer(script...)
			defer srv.Close()

			skipOwn := func(rel string) bool { return rel == "memory" || rel == "state" || rel == "home" }
			before := treeHash(t, w.root, skipOwn)
			memBefore := snapshot(t, w.mem)

			r := w.dream(modelEnv(p.provider, srv.URL, p.stream), append([]string{"run", "--json", "--max-turns", "30"}, w.locFlags()...)...)
			if rep := decodeJSON[dream.Report](t, r); r.code != 0 || rep.Status != "completed" {
				t.Fatalf("the dream must complete despite refused calls:\n%s", r)
			}
			if after := treeHash(t, w.root, skipOwn); after != before {
				t.Fatalf("files outside the memory dir changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if _, err := os.Stat("/etc/dream-pwned"); err == nil {
				t.Fatal("wrote /etc/dream-pwned")
			}
			memAfter := snapshot(t, w.mem)
			if len(memAfter) != len(memBefore) {
				t.Errorf("memory files changed: before %v after %v", keys(memBefore), keys(memAfter))
			}
			for k, v := range memBefore {
				if memAfter[k] != v {
					t.Errorf("memory file %s changed", k)
				}
			}
			// Every attempt came back to the model as an error result.
			reqs := srv.Requests()
			errorsSeen := 0
			for _, req := range reqs {
				errorsSeen += countToolErrors(t, req.Protocol, req.Body)
			}
			if errorsSeen < len(attempts) {
				t.Errorf("tool errors seen by the model = %d, want %d", errorsSeen, len(attempts))
			}
		})
	}
}

// countToolErrors counts the error tool results that answer the newest
// assistant turn of a recorded request body: the last message's
// tool_result blocks (Anthropic) or the trailing role "tool" messages
// (OpenAI, which has no is_error and gets an "ERROR" prefix instead).
func countToolErrors(t *testing.T, protocol string, body []byte) int {
	t.Helper()
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		return 0
	}
	if protocol == "anthropic" {
		var m struct {
			Content []struct {
				Type    string `json:"type"`
				IsError bool   `json:"is_error"`
			} `json:"content"`
		}
		json.Unmarshal(req.Messages[len(req.Messages)-1], &m)
		n := 0
		for _, c := range m.Content {
			if c.Type == "tool_result" && c.IsError {
				n++
			}
		}
		return n
	}
	n := 0
	for i := len(req.Messages) - 1; i >= 0; i-- {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(req.Messages[i], &m)
		if m.Role != "tool" {
			break
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			text = string(m.Content)
		}
		if strings.Contains(text, "ERROR") {
			n++
		}
	}
	return n
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestPersistentServerErrorsRollBack(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel() // most of each case is the provider's back-off between retries
			w := newWorld(t)
			prior := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
			w.write(w.mem, ".consolidate-lock", "")
			os.Chtimes(filepath.Join(w.mem, ".consolidate-lock"), prior, prior)
			memBefore := snapshot(t, w.mem)
			srv := llmtest.NewServer(llmtest.Turn{Status: 500, Repeat: -1})
			defer srv.Close()
			start := time.Now()
			r := w.dream(modelEnv(p.provider, srv.URL, p.stream), append([]string{"run", "--json"}, w.locFlags()...)...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", r.code, r)
			}
			rep := decodeJSON[dream.Report](t, r)
			if rep.Status != "failed" || !strings.Contains(rep.Error, "500") {
				t.Errorf("report status %q error %q", rep.Status, rep.Error)
			}
			fi, err := os.Stat(filepath.Join(w.mem, ".consolidate-lock"))
			if err != nil || !fi.ModTime().Equal(prior) {
				t.Errorf("lock not rolled back: %v %v, want mtime %v", fi.ModTime(), err, prior)
			}
			if after := snapshot(t, w.mem); len(after) != len(memBefore) {
				t.Errorf("memory changed after a failed dream")
			}
			if len(srv.Requests()) < 2 {
				t.Errorf("the provider did not retry: %d request(s)", len(srv.Requests()))
			}
			t.Logf("failed after %d requests in %s", len(srv.Requests()), time.Since(start).Round(time.Millisecond))
		})
	}
}

func TestLoopingModelStopsAtTurnCap(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// A model that never ends its turn: each call differs, so only the turn
	// cap can stop it.
	srv := llmtest.NewServer()
	for i := 0; i < 50; i++ {
		srv.Append(llmtest.Turn{Calls: []llmtest.Call{{Name: "grep", Input: map[string]any{"pattern": "x" + strings.Repeat("y", i), "path": "."}}}})
	}
	defer srv.Close()
	memBefore := snapshot(t, w.mem)
	r := w.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json", "--max-turns", "5"}, w.locFlags()...)...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", r.code, r)
	}
	rep := decodeJSON[dream.Report](t, r)
	if rep.Turns != 5 || len(srv.Requests()) != 5 || !strings.Contains(rep.Error, "turn") {
		t.Fatalf("turns %d requests %d error %q", rep.Turns, len(srv.Requests()), rep.Error)
	}
	if after := snapshot(t, w.mem); len(after) != len(memBefore) {
		t.Errorf("memory changed")
	}
	if _, err := os.Stat(filepath.Join(w.mem, ".consolidate-lock")); !os.IsNotExist(err) {
		t.Errorf("with no prior consolidation the lock must be removed on failure: %v", err)
	}
}

func TestIdenticalCallsAreRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	same := llmtest.Call{Name: "ls", Input: map[string]any{"path": w.mem}}
	var script []llmtest.Turn
	for i := 0; i < 8; i++ {
		script = append(script, llmtest.Turn{Calls: []llmtest.Call{same}})
	}
	srv := llmtest.NewServer(script...)
	defer srv.Close()
	r := w.dream(modelEnv("openai", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (a looping model is stopped):\n%s", r.code, r)
	}
	rep := decodeJSON[dream.Report](t, r)
	if rep.Turns >= 8 || !strings.Contains(strings.ToLower(rep.Error), "loop") {
		t.Fatalf("turns %d error %q: want the loop detector to stop it early", rep.Turns, rep.Error)
	}
}
