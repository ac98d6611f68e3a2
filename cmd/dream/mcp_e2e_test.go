package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPOverStdioSubprocess drives a real `dream mcp` process with the
// SDK's client over its stdin and stdout.
func TestMCPOverStdioSubprocess(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	notes := "---\nname: notes\ndescription: notes\ntype: user\n---\n\n# 笔记\n\n- The user prefers tabs over spaces in Go code.\n- 部署在周五进行。\n- The user prefers tabs over spaces in Go code.\n"
	w.write(w.mem, "notes.md", notes)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(binPath, append([]string{"mcp"}, w.locFlags()...)...)
	cmd.Env = append(append([]string{}, w.env...), "DREAM_PROVIDER=offline")
	cmd.Dir = w.repo
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "dream" {
		t.Errorf("server name %q", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 10 {
		t.Errorf("%d tools, want 10", len(tools.Tools))
	}
	callTool := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: tool error %v", name, res.Content)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	st := callTool("dream_status", nil)
	if st["memory_dir"] != w.mem {
		t.Errorf("status memory_dir %v", st["memory_dir"])
	}
	run := callTool("dream_run", nil)
	id, _ := run["task_id"].(string)
	if run["staged"] != true || id == "" {
		t.Fatalf("dream_run: %v", run)
	}
	diff := callTool("dream_diff", map[string]any{"id": id})
	if d, _ := diff["diff"].(string); !strings.Contains(d, "-- The user prefers tabs") {
		t.Errorf("dream_diff: %v", diff)
	}
	callTool("dream_apply", map[string]any{"id": id})
	b, _ := os.ReadFile(filepath.Join(w.mem, "notes.md"))
	if strings.Count(string(b), "The user prefers tabs") != 1 || !strings.Contains(string(b), "部署在周五进行。") {
		t.Errorf("after dream_apply:\n%s", b)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file://" + filepath.ToSlash(filepath.Join(w.mem, "notes.md"))})
	if err != nil || rr.Contents[0].Text != string(b) {
		t.Errorf("resource notes.md: %v %+v", err, rr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dream_show", Arguments: map[string]any{"id": "no-such-dream"}})
	if err != nil || !res.IsError {
		t.Errorf("dream_show of an unknown id: err %v, result %+v", err, res)
	}
}

// mcpProcess is a `dream mcp` process driven line by line, as a client
// that may misbehave would drive it.
type mcpProcess struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startMCP(t *testing.T, w *world, extraEnv []string) *mcpProcess {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"mcp"}, w.locFlags()...)...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Dir = w.repo
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &mcpProcess{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
}

func (p *mcpProcess) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing to dream mcp: %v", err)
	}
}

// recv returns the next line on stdout, which must be a JSON-RPC 2.0
// message, and its length.
func (p *mcpProcess) recv() (map[string]any, int) {
	p.t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("dream mcp ended before answering: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil || m["jsonrpc"] != "2.0" {
		p.t.Fatalf("dream mcp wrote a line that is not a JSON-RPC message: %.200q", line)
	}
	return m, len(line)
}

// recvID skips notifications up to the response to id.
func (p *mcpProcess) recvID(id float64) (map[string]any, int) {
	p.t.Helper()
	for {
		if m, n := p.recv(); m["id"] == id && m["method"] == nil {
			return m, n
		}
	}
}

func rpcErrorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestMCPHostileClient is issue 28's `dream mcp` against a client that
// misbehaves, on the real binary and a model dream against the fake
// server: a line that is not JSON mid-session is answered -32700 and the
// session goes on; a 1 MB dream id comes back as a short tool error, not
// echoed whole; and a dream started with apply=true lands although the
// client sends garbage and then closes stdin while it runs, after which
// the server exits 0.
func TestMCPHostileClient(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := llmtest.NewServer(
		llmtest.Turn{Dynamic: func(llmtest.Recorded) llmtest.Turn {
			once.Do(func() { close(asked) })
			select {
			case <-release:
			case <-time.After(time.Minute):
			}
			return llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{
				"file_path": "testing.md",
				"content":   "---\nname: testing\ndescription: how to run the tests\ntype: project\n---\n\nThe tests run with go test.\n",
			}}}}
		}},
		llmtest.Turn{Text: "Added a testing memory."},
	)
	defer srv.Close()
	p := startMCP(t, w, modelEnv("anthropic", srv.URL, false))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`)
	if m, _ := p.recvID(1); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	p.send("this line is not JSON")
	if m, _ := p.recv(); rpcErrorCode(m) != -32700 || m["id"] != nil {
		t.Fatalf("answer to a line that is not JSON: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	if m, _ := p.recvID(2); m["result"] == nil {
		t.Fatalf("tools/list after a bad line: %v", m)
	}

	args, _ := json.Marshal(map[string]any{"name": "dream_show", "arguments": map[string]any{"id": strings.Repeat("9", 1<<20)}})
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":` + string(args) + `}`)
	m, n := p.recvID(3)
	if res, _ := m["result"].(map[string]any); res["isError"] != true || n > 2000 {
		t.Fatalf("dream_show of a 1 MB id: a %d-byte answer: %.300v", n, m)
	}

	p.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"dream_run","arguments":{"apply":true}}}`)
	select {
	case <-asked:
	case <-time.After(time.Minute):
		t.Fatal("the dream never asked the model")
	}
	p.send("}{ garbage while the dream runs")
	if m, _ := p.recv(); rpcErrorCode(m) != -32700 {
		t.Fatalf("answer to garbage during the dream: %v", m)
	}
	p.in.Close()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("dream mcp exited (%v) with its dream running", err)
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("dream mcp after stdin closed: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("dream mcp did not exit after its dream ended")
	}
	if b, err := os.ReadFile(filepath.Join(w.mem, "testing.md")); err != nil || !strings.Contains(string(b), "The tests run with go test.") {
		t.Fatalf("the dream did not land: %v %q", err, b)
	}
	r := w.dream(nil, append([]string{"tasks", "--json"}, w.locFlags()...)...)
	var tasks []struct{ Status string }
	if err := json.Unmarshal([]byte(r.stdout), &tasks); err != nil || len(tasks) != 1 || tasks[0].Status != "completed" {
		t.Fatalf("tasks after the client left: %v\n%s", err, r)
	}
}
