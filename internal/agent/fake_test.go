package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
)

// scriptProvider answers turn i with step i of its script and records a deep
// copy of every request, taken at call time, so a later rewrite by the loop
// of an already-sent message would show up as a difference.
type scriptProvider struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, req *llm.Request) (*llm.Response, error)
	reqs  []*llm.Request
}

func (p *scriptProvider) Name() string { return "script" }

func (p *scriptProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	p.mu.Lock()
	n := len(p.reqs)
	p.reqs = append(p.reqs, copyRequest(req))
	p.mu.Unlock()
	if n >= len(p.steps) {
		return nil, fmt.Errorf("script exhausted at request %d", n+1)
	}
	return p.steps[n](ctx, req)
}

func (p *scriptProvider) requests() []*llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*llm.Request(nil), p.reqs...)
}

func copyRequest(r *llm.Request) *llm.Request {
	c := *r
	c.Tools = make([]llm.Tool, len(r.Tools))
	for i, t := range r.Tools {
		t.InputSchema = append(json.RawMessage(nil), t.InputSchema...)
		c.Tools[i] = t
	}
	c.Messages = make([]llm.Message, len(r.Messages))
	for i, m := range r.Messages {
		blocks := make([]llm.Block, len(m.Content))
		for j, b := range m.Content {
			b.Input = append(json.RawMessage(nil), b.Input...)
			blocks[j] = b
		}
		c.Messages[i] = llm.Message{Role: m.Role, Content: blocks}
	}
	return &c
}

// reply is a step that returns resp unchanged.
func reply(resp *llm.Response) func(context.Context, *llm.Request) (*llm.Response, error) {
	return func(context.Context, *llm.Request) (*llm.Response, error) { return resp, nil }
}

// steps turns responses into a script.
func steps(resps ...*llm.Response) []func(context.Context, *llm.Request) (*llm.Response, error) {
	out := make([]func(context.Context, *llm.Request) (*llm.Response, error), len(resps))
	for i, r := range resps {
		out[i] = reply(r)
	}
	return out
}

var smallUsage = llm.Usage{InputTokens: 100, OutputTokens: 20}

// done is a final assistant turn.
func done(text string) *llm.Response {
	return &llm.Response{
		Content:    []llm.Block{{Type: llm.BlockText, Text: text}},
		StopReason: llm.StopEndTurn,
		Usage:      smallUsage,
	}
}

// calls is an assistant turn that asks for tools.
func calls(uses ...llm.Block) *llm.Response {
	return &llm.Response{Content: uses, StopReason: llm.StopToolUse, Usage: smallUsage}
}

func use(id, name, input string) llm.Block {
	return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

// fakeTool is a tool whose behaviour each test chooses.
type fakeTool struct {
	name     string
	validate func(json.RawMessage) error
	execute  func(context.Context, json.RawMessage) (tools.Result, error)
	mu       sync.Mutex
	inputs   []string
}

func (t *fakeTool) Name() string            { return t.name }
func (t *fakeTool) Description() string     { return "fake " + t.name }
func (t *fakeTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }

func (t *fakeTool) Validate(in json.RawMessage) error {
	if t.validate != nil {
		return t.validate(in)
	}
	return nil
}

func (t *fakeTool) Execute(ctx context.Context, in json.RawMessage) (tools.Result, error) {
	t.mu.Lock()
	t.inputs = append(t.inputs, string(in))
	t.mu.Unlock()
	if t.execute != nil {
		return t.execute(ctx, in)
	}
	return tools.Result{Content: "ok"}, nil
}

// readTool returns a fixed text naming the file it was asked for.
func readTool() *fakeTool {
	return &fakeTool{
		name: "read",
		validate: func(in json.RawMessage) error {
			var v struct {
				FilePath string `json:"file_path"`
			}
			if err := json.Unmarshal(in, &v); err != nil {
				return err
			}
			if v.FilePath == "" {
				return errors.New("file_path is required")
			}
			return nil
		},
		execute: func(_ context.Context, in json.RawMessage) (tools.Result, error) {
			var v struct {
				FilePath string `json:"file_path"`
			}
			if err := json.Unmarshal(in, &v); err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Content: "contents of " + v.FilePath}, nil
		},
	}
}

// writeTool reports the file it wrote as touched; a path containing "fail"
// makes it fail, as a sandbox refusal would.
func writeTool(name string) *fakeTool {
	return &fakeTool{
		name: name,
		execute: func(_ context.Context, in json.RawMessage) (tools.Result, error) {
			var v struct {
				FilePath string `json:"file_path"`
			}
			if err := json.Unmarshal(in, &v); err != nil {
				return tools.Result{}, err
			}
			if v.FilePath == "" || v.FilePath == "fail.md" {
				return tools.Result{}, fmt.Errorf("cannot write %q", v.FilePath)
			}
			return tools.Result{Content: "wrote " + v.FilePath, Touched: v.FilePath}, nil
		},
	}
}

func defaultTools() []tools.Tool {
	return []tools.Tool{readTool(), writeTool("write"), writeTool("edit")}
}
