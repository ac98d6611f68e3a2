package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/llm"
)

// memoryFiles is the example memory the fake tools serve: an index and topic
// files of a few hundred bytes to a few KB, like a month of real use.
func memoryFiles() map[string]string {
	topic := func(name, desc, typ, body string) string {
		return fmt.Sprintf("---\nname: %s\ndescription: %s\ntype: %s\n---\n\n%s", name, desc, typ, body)
	}
	testing := strings.Repeat("- Run `go test -race ./...` before pushing; the CI runs the same with -count=1.\n", 6) +
		"- Table tests with golden files under testdata/, regenerated with -update.\n" +
		"- Last week we agreed to keep fuzz seeds in testdata/fuzz/.\n"
	tests := strings.Repeat("- Tests: `go test -race ./...` before a push, same as CI.\n", 5) +
		"- Golden files live in testdata/ and are rewritten with the -update flag.\n"
	build := "- Release with `scripts/release.sh`, which tags and uploads.\n" +
		"- The binary is built with `go build ./cmd/app`; CGO is off.\n" +
		strings.Repeat("- Cross-compile for linux/amd64, linux/arm64 and darwin/arm64.\n", 3)
	user := "- Ana, backend engineer; prefers British spelling and short answers.\n" +
		"- Reviews diffs in the terminal; dislikes generated files in PRs.\n"
	var idx strings.Builder
	idx.WriteString("# Memory index\n\n")
	for _, l := range []string{
		"- [Testing](testing.md) — how tests are run and where golden files live",
		"- [Tests](tests.md) — test conventions",
		"- [Build and release](build.md) — building, cross-compiling and releasing",
		"- [User](user.md) — who Ana is and how she likes to work",
		"- [Old notes](old.md) — misc notes",
	} {
		idx.WriteString(l + "\n")
	}
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&idx, "- [Topic %d](topic%d.md) — decisions about subsystem %d of the service\n", i, i, i)
	}
	return map[string]string{
		"MEMORY.md":  idx.String(),
		"testing.md": topic("Testing", "how tests are run", "project", testing),
		"tests.md":   topic("Tests", "test conventions", "project", tests),
		"build.md":   topic("Build and release", "building and releasing", "project", build),
		"user.md":    topic("User", "who the user is", "user", user),
	}
}

// workspace lays the example out on disk (memory, a small repository and
// transcripts) so that the dream runs the real six tools, with their real
// descriptions, schemas and outputs: the request sizes are the ones a user's
// dream sends.
type workspace struct{ root, mem, repo, sessions string }

func newWorkspace(root string, files map[string]string) (workspace, error) {
	ws := workspace{root: root, mem: filepath.Join(root, "memory"), repo: filepath.Join(root, "repo"), sessions: filepath.Join(root, "sessions")}
	put := func(dir, name, content string) error {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	for name, content := range files {
		if err := put(ws.mem, name, content); err != nil {
			return ws, err
		}
	}
	for name, content := range map[string]string{
		"scripts/build.sh": "#!/bin/sh\ngo build ./cmd/app\n",
		"scripts/lint.sh":  "#!/bin/sh\ngo vet ./...\n",
		".goreleaser.yaml": "builds:\n  - main: ./cmd/app\n",
		"cmd/app/main.go":  "package main\n\nfunc main() {}\n",
		"go.mod":           "module example.com/app\n\ngo 1.26\n",
	} {
		if err := put(ws.repo, name, content); err != nil {
			return ws, err
		}
	}
	var b strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, `{"type":"user","message":{"role":"user","content":"step %d of the work on the service"},"timestamp":"2026-03-1%dT10:%02d:00Z"}`+"\n", i, i%10, i)
		if i%5 == 0 {
			fmt.Fprintf(&b, `{"type":"user","message":{"role":"user","content":"we moved releases to goreleaser, scripts/release.sh is gone (step %d)"},"timestamp":"2026-03-1%dT10:%02d:30Z"}`+"\n", i, i%10, i)
		}
	}
	if err := put(ws.sessions, "s1.jsonl", b.String()); err != nil {
		return ws, err
	}
	return ws, nil
}

// script is the model's side of a 10-turn dream through the four phases.
func script(files map[string]string, ws workspace) []*llm.Response {
	mem := func(name string) string { return filepath.Join(ws.mem, name) }
	n := 0
	call := func(name string, input map[string]any) llm.Block {
		n++
		b, _ := json.Marshal(input)
		return llm.Block{Type: llm.BlockToolUse, ID: fmt.Sprintf("toolu_%02d", n), Name: name, Input: b}
	}
	text := func(s string) llm.Block { return llm.Block{Type: llm.BlockText, Text: s} }
	turn := func(blocks ...llm.Block) *llm.Response {
		return &llm.Response{Content: blocks, StopReason: llm.StopToolUse,
			Usage: llm.Usage{InputTokens: 50, CacheReadInputTokens: 3000, OutputTokens: 150}}
	}
	merged := files["testing.md"] + "- Golden files are rewritten with the -update flag.\n"
	return []*llm.Response{
		turn(text("Orienting: listing the memory directory."), call("ls", map[string]any{"path": ws.mem})),
		turn(call("read", map[string]any{"file_path": mem("MEMORY.md")})),
		turn(text("testing.md and tests.md look like duplicates; reading both."),
			call("read", map[string]any{"file_path": mem("testing.md")}), call("read", map[string]any{"file_path": mem("tests.md")})),
		turn(call("read", map[string]any{"file_path": mem("build.md")}), call("grep", map[string]any{"pattern": "release.sh", "path": ws.repo})),
		turn(call("glob", map[string]any{"pattern": "scripts/*.sh"})),
		turn(text("Checking the transcripts narrowly for the release change."),
			call("grep", map[string]any{"pattern": "goreleaser", "path": ws.sessions, "glob": "*.jsonl", "head_limit": 8})),
		turn(text("Merging tests.md into testing.md and dating the agreement."),
			call("write", map[string]any{"file_path": "testing.md", "content": strings.Replace(merged, "Last week", "On 2026-03-07", 1)})),
		turn(call("edit", map[string]any{"file_path": "build.md",
			"old_string": "- Release with `scripts/release.sh`, which tags and uploads.",
			"new_string": "- Release with goreleaser (`.goreleaser.yaml`); scripts/release.sh was removed."})),
		turn(text("Updating the index."), call("edit", map[string]any{"file_path": "MEMORY.md",
			"old_string": "- [Tests](tests.md) — test conventions\n", "new_string": ""})),
		{Content: []llm.Block{text("Merged tests.md into testing.md; dated the fuzz-seed agreement (2026-03-07); " +
			"build.md now says releases use goreleaser; removed the tests.md pointer.")},
			StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 50, CacheReadInputTokens: 6000, OutputTokens: 80}},
	}
}

// recorder is a scripted provider that keeps each request serialised at the
// moment it was sent, in cache order.
type recorder struct {
	script []*llm.Response
	sent   [][]byte
	reqs   []llm.Request // shallow copies; the loop never rewrites a sent message
}

var _ llm.Provider = (*recorder)(nil)

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := serialize(req)
	if err != nil {
		return nil, err
	}
	r.sent = append(r.sent, b)
	r.reqs = append(r.reqs, *req)
	i := len(r.sent) - 1
	if i >= len(r.script) {
		return nil, fmt.Errorf("script has %d turns, request %d", len(r.script), i+1)
	}
	return r.script[i], nil
}
