package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dreamkit/dream/internal/tools"
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

// sessionLines is what a narrow grep over transcripts returns.
func sessionLines() string {
	var b strings.Builder
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, `s%d.jsonl:%d:{"type":"user","message":{"role":"user","content":"we moved releases to goreleaser, scripts/release.sh is gone (step %d)"},"timestamp":"2026-03-1%dT10:0%d:00Z"}`+"\n", i, 40+i, i, i%10, i)
	}
	b.WriteString("(8 matches shown, 23 more)\n")
	return b.String()
}

// fakeTool is a model-facing tool backed by the in-memory example.
type fakeTool struct {
	name, desc, schema string
	run                func(in map[string]any) (tools.Result, error)
}

func (t *fakeTool) Name() string                   { return t.name }
func (t *fakeTool) Description() string            { return t.desc }
func (t *fakeTool) Schema() json.RawMessage        { return json.RawMessage(t.schema) }
func (t *fakeTool) Validate(json.RawMessage) error { return nil }

func (t *fakeTool) Execute(_ context.Context, in json.RawMessage) (tools.Result, error) {
	var m map[string]any
	if err := json.Unmarshal(in, &m); err != nil {
		return tools.Result{}, fmt.Errorf("decoding input: %w", err)
	}
	return t.run(m)
}

// fakeTools returns the six tools with realistic descriptions and schemas,
// reading and writing files.
func fakeTools(files map[string]string) []tools.Tool {
	var mu sync.Mutex
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	return []tools.Tool{
		&fakeTool{"read", "Read a file. Returns numbered lines; use offset and limit for large files. Output is capped.",
			`{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["file_path"]}`,
			func(m map[string]any) (tools.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				c, ok := files[str(m, "file_path")]
				if !ok {
					return tools.Result{}, fmt.Errorf("%s: no such file", str(m, "file_path"))
				}
				var b strings.Builder
				for i, l := range strings.Split(c, "\n") {
					fmt.Fprintf(&b, "%6d\t%s\n", i+1, l)
				}
				return tools.Result{Content: b.String()}, nil
			}},
		&fakeTool{"glob", "Find files by glob pattern (supports **). Returns matching paths, newest first.",
			`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`,
			func(map[string]any) (tools.Result, error) {
				return tools.Result{Content: "scripts/build.sh\nscripts/lint.sh\n.goreleaser.yaml\n"}, nil
			}},
		&fakeTool{"grep", "Search file contents with a regular expression. Output is capped; narrow with glob and head_limit.",
			`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"},"output_mode":{"type":"string","enum":["content","files_with_matches","count"]},"head_limit":{"type":"integer"}},"required":["pattern"]}`,
			func(m map[string]any) (tools.Result, error) {
				if strings.Contains(str(m, "path"), "sessions") {
					return tools.Result{Content: sessionLines()}, nil
				}
				return tools.Result{Content: "No matches for " + str(m, "pattern") + "\n"}, nil
			}},
		&fakeTool{"ls", "List a directory.",
			`{"type":"object","properties":{"path":{"type":"string"}}}`,
			func(map[string]any) (tools.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				names := make([]string, 0, len(files))
				for n := range files {
					names = append(names, n)
				}
				sort.Strings(names)
				return tools.Result{Content: strings.Join(names, "\n") + "\n"}, nil
			}},
		&fakeTool{"write", "Write a whole memory file (inside the memory directory only).",
			`{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}`,
			func(m map[string]any) (tools.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				p := str(m, "file_path")
				files[p] = str(m, "content")
				return tools.Result{Content: fmt.Sprintf("Wrote %d bytes to %s", len(files[p]), p), Touched: p}, nil
			}},
		&fakeTool{"edit", "Replace old_string with new_string in a memory file; old_string must be unique unless replace_all.",
			`{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["file_path","old_string","new_string"]}`,
			func(m map[string]any) (tools.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				p := str(m, "file_path")
				c, ok := files[p]
				if !ok || !strings.Contains(c, str(m, "old_string")) {
					return tools.Result{}, fmt.Errorf("old_string not found in %s", p)
				}
				files[p] = strings.Replace(c, str(m, "old_string"), str(m, "new_string"), 1)
				return tools.Result{Content: "Edited " + p, Touched: p}, nil
			}},
	}
}

// script is the model's side of a 10-turn dream through the four phases.
func script(files map[string]string) []*llm.Response {
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
		turn(text("Orienting: listing the memory directory."), call("ls", map[string]any{"path": "memory"})),
		turn(call("read", map[string]any{"file_path": "MEMORY.md"})),
		turn(text("testing.md and tests.md look like duplicates; reading both."),
			call("read", map[string]any{"file_path": "testing.md"}), call("read", map[string]any{"file_path": "tests.md"})),
		turn(call("read", map[string]any{"file_path": "build.md"}), call("grep", map[string]any{"pattern": "release.sh", "path": "repo"})),
		turn(call("glob", map[string]any{"pattern": "scripts/*.sh"})),
		turn(text("Checking the transcripts narrowly for the release change."),
			call("grep", map[string]any{"pattern": "release", "path": "sessions", "glob": "*.jsonl", "head_limit": 8})),
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
