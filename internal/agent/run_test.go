package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
)

// lastResults returns the tool_result blocks of request n (1-based).
func lastResults(t *testing.T, reqs []*llm.Request, n int) []llm.Block {
	t.Helper()
	if len(reqs) < n {
		t.Fatalf("only %d requests, want request %d", len(reqs), n)
	}
	msgs := reqs[n-1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleUser {
		t.Fatalf("request %d: last message role %q, want user", n, last.Role)
	}
	return last.Content
}

func TestRun(t *testing.T) {
	loopingTurn := calls(use("x", "bash", `{"command":"ls"}`))
	tests := []struct {
		name    string
		script  []*llm.Response
		tools   []tools.Tool
		tweak   func(*Config)
		wantErr error
		want    Result
		check   func(t *testing.T, reqs []*llm.Request)
	}{
		{
			name:   "end_turn on first turn",
			script: []*llm.Response{done("Nothing needed changing.")},
			want:   Result{Turns: 1, Usage: smallUsage, Summary: "Nothing needed changing.", Stop: StopEndTurn},
		},
		{
			name: "stop without tool calls for another reason ends successfully",
			script: []*llm.Response{{
				Content: []llm.Block{{Type: llm.BlockText, Text: "cut"}}, StopReason: llm.StopMaxTokens, Usage: smallUsage,
			}},
			want: Result{Turns: 1, Usage: smallUsage, Summary: "cut", Stop: "model_max_tokens"},
		},
		{
			name: "tool round trip",
			script: []*llm.Response{
				calls(use("t1", "read", `{"file_path":"MEMORY.md"}`)),
				done("Read the index; all good."),
			},
			want: Result{Turns: 2, ToolCalls: 1, Usage: llm.Usage{InputTokens: 200, OutputTokens: 40},
				Summary: "Read the index; all good.", Stop: StopEndTurn},
			check: func(t *testing.T, reqs []*llm.Request) {
				got := lastResults(t, reqs, 2)
				want := []llm.Block{{Type: llm.BlockToolResult, ID: "t1", Text: "contents of MEMORY.md"}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("tool results = %+v, want %+v", got, want)
				}
			},
		},
		{
			name: "errors become is_error results in call order",
			script: []*llm.Response{
				calls(
					use("a", "bash", `{"command":"rm -rf /"}`),
					use("b", "read", `{"file_path":`),
					use("c", "read", `{}`),
					use("d", "write", `{"file_path":"fail.md","content":"x"}`),
					use("e", "read", `{"file_path":"a.md"}`),
				),
				done("done"),
			},
			want: Result{Turns: 2, ToolCalls: 5, Usage: llm.Usage{InputTokens: 200, OutputTokens: 40},
				Summary: "done", Stop: StopEndTurn},
			check: func(t *testing.T, reqs []*llm.Request) {
				got := lastResults(t, reqs, 2)
				wants := []struct {
					id, sub string
					isErr   bool
				}{
					{"a", `unknown tool "bash"; available tools: read, write, edit`, true},
					{"b", "not valid JSON", true},
					{"c", "invalid input: file_path is required", true},
					{"d", `write failed: cannot write "fail.md"`, true},
					{"e", "contents of a.md", false},
				}
				if len(got) != len(wants) {
					t.Fatalf("%d results, want %d", len(got), len(wants))
				}
				for i, w := range wants {
					g := got[i]
					if g.Type != llm.BlockToolResult || g.ID != w.id || g.IsError != w.isErr || !strings.Contains(g.Text, w.sub) {
						t.Errorf("result %d = %+v, want id %q is_error %v containing %q", i, g, w.id, w.isErr, w.sub)
					}
				}
			},
		},
		{
			name: "third identical call is refused, even respelled",
			script: []*llm.Response{
				calls(use("1", "read", `{"file_path":"a.md","limit":10}`)),
				calls(use("2", "read", `{"limit":10,"file_path":"a.md"}`)),
				calls(use("3", "read", "{ \"limit\": 10,\n \"file_path\" : \"a.md\" }")),
				calls(use("4", "read", `{"file_path":"a.md","limit":11}`)),
				done("done"),
			},
			want: Result{Turns: 5, ToolCalls: 4, Usage: llm.Usage{InputTokens: 500, OutputTokens: 100},
				Summary: "done", Stop: StopEndTurn},
			check: func(t *testing.T, reqs []*llm.Request) {
				for n, wantErr := range map[int]bool{2: false, 3: false, 4: true, 5: false} {
					r := lastResults(t, reqs, n)[0]
					if r.IsError != wantErr {
						t.Errorf("request %d result is_error = %v, want %v (%q)", n, r.IsError, wantErr, r.Text)
					}
				}
				if r := lastResults(t, reqs, 4)[0]; !strings.Contains(r.Text, "already requested 2 times") {
					t.Errorf("refusal text %q does not explain the repeat", r.Text)
				}
			},
		},
		{
			name:    "consecutive refused turns end with ErrLooping",
			script:  []*llm.Response{loopingTurn, loopingTurn, loopingTurn, loopingTurn, loopingTurn, done("never")},
			wantErr: ErrLooping,
			want: Result{Turns: 5, ToolCalls: 5, Usage: llm.Usage{InputTokens: 500, OutputTokens: 100},
				Stop: StopLoop},
		},
		{
			name: "a successful call resets the refusal streak",
			script: []*llm.Response{loopingTurn, loopingTurn, loopingTurn, loopingTurn,
				calls(use("r", "read", `{"file_path":"a.md"}`), use("x", "bash", `{}`)),
				loopingTurn, loopingTurn, loopingTurn, loopingTurn, done("ok")},
			want: Result{Turns: 10, ToolCalls: 10, Usage: llm.Usage{InputTokens: 1000, OutputTokens: 200},
				Summary: "ok", Stop: StopEndTurn},
		},
		{
			name: "turn cap ends with ErrMaxTurns",
			script: []*llm.Response{
				calls(use("1", "read", `{"file_path":"1.md"}`)),
				calls(use("2", "read", `{"file_path":"2.md"}`)),
				calls(use("3", "read", `{"file_path":"3.md"}`)),
				done("never"),
			},
			tweak:   func(c *Config) { c.MaxTurns = 3 },
			wantErr: ErrMaxTurns,
			want: Result{Turns: 3, ToolCalls: 3, Usage: llm.Usage{InputTokens: 300, OutputTokens: 60},
				Stop: StopMaxTurns},
		},
		{
			name: "budget crossed by a response stops before its tool calls",
			script: []*llm.Response{{
				Content:    []llm.Block{use("1", "write", `{"file_path":"a.md","content":"x"}`)},
				StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 900, OutputTokens: 200},
			}, done("never")},
			tweak:   func(c *Config) { c.MaxTokens = 1000 },
			wantErr: ErrBudget,
			want:    Result{Turns: 1, Usage: llm.Usage{InputTokens: 900, OutputTokens: 200}, Stop: StopBudget},
		},
		{
			name: "budget estimate stops before a request that must overflow",
			script: []*llm.Response{
				{
					Content:    []llm.Block{use("1", "read", `{"file_path":"a.md"}`)},
					StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 100, CacheReadInputTokens: 400, OutputTokens: 50},
				},
				done("never"),
			},
			tweak:   func(c *Config) { c.MaxTokens = 1000 },
			wantErr: ErrBudget,
			want: Result{Turns: 1, ToolCalls: 1,
				Usage: llm.Usage{InputTokens: 100, CacheReadInputTokens: 400, OutputTokens: 50}, Stop: StopBudget},
		},
		{
			name: "a finished dream over budget is kept",
			script: []*llm.Response{{
				Content: []llm.Block{{Type: llm.BlockText, Text: "done"}}, StopReason: llm.StopEndTurn,
				Usage: llm.Usage{InputTokens: 5000},
			}},
			tweak: func(c *Config) { c.MaxTokens = 1000 },
			want:  Result{Turns: 1, Usage: llm.Usage{InputTokens: 5000}, Summary: "done", Stop: StopEndTurn},
		},
		{
			name: "calls that ran and failed are facts, not refusals: the run goes on",
			script: []*llm.Response{
				calls(use("1", "write", `{"file_path":"fail.md","content":"x1"}`)),
				calls(use("2", "write", `{"file_path":"fail.md","content":"x2"}`)),
				calls(use("3", "write", `{"file_path":"fail.md","content":"x3"}`)),
				calls(use("4", "write", `{"file_path":"fail.md","content":"x4"}`)),
				calls(use("5", "write", `{"file_path":"fail.md","content":"x5"}`)),
				calls(use("6", "write", `{"file_path":"fail.md","content":"x6"}`)),
				done("Those files are gone; nothing to fix."),
			},
			want: Result{Turns: 7, ToolCalls: 6, Usage: llm.Usage{InputTokens: 700, OutputTokens: 140},
				Summary: "Those files are gone; nothing to fix.", Stop: StopEndTurn},
		},
		{
			name: "a re-read after an edit is not a repeat",
			script: []*llm.Response{
				calls(use("1", "read", `{"file_path":"a.md"}`)),
				calls(use("2", "read", `{"file_path":"a.md"}`)),
				calls(use("3", "edit", `{"file_path":"a.md","old_string":"x","new_string":"y"}`)),
				calls(use("4", "read", `{"file_path":"a.md"}`)),
				done("Edited and checked."),
			},
			want: Result{Turns: 5, ToolCalls: 4, Usage: llm.Usage{InputTokens: 500, OutputTokens: 100},
				FilesTouched: []string{"a.md"}, Summary: "Edited and checked.", Stop: StopEndTurn},
			check: func(t *testing.T, reqs []*llm.Request) {
				if got := lastResults(t, reqs, 5); len(got) != 1 || got[0].IsError {
					t.Errorf("the read after the edit was refused: %+v", got)
				}
			},
		},
		{
			name: "only successful writes and edits count as touched",
			script: []*llm.Response{
				calls(
					use("1", "write", `{"file_path":"a.md","content":"x"}`),
					use("2", "write", `{"file_path":"fail.md","content":"x"}`),
					use("3", "read", `{"file_path":"b.md"}`),
					use("4", "edit", `{"file_path":"a.md","old_string":"x","new_string":"y"}`),
					use("5", "write", `{"file_path":"c.md","content":"z"}`),
				),
				done("Merged notes."),
			},
			want: Result{Turns: 2, ToolCalls: 5, Usage: llm.Usage{InputTokens: 200, OutputTokens: 40},
				FilesTouched: []string{"a.md", "c.md"}, Summary: "Merged notes.", Stop: StopEndTurn},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &scriptProvider{steps: steps(tt.script...)}
			ts := tt.tools
			if ts == nil {
				ts = defaultTools()
			}
			cfg := Config{Provider: p, Model: "m", System: "sys", Task: "consolidate", Tools: ts}
			if tt.tweak != nil {
				tt.tweak(&cfg)
			}
			got, err := Run(context.Background(), cfg)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("Run: unexpected error %v", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run error = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Result = %+v\nwant     %+v", got, tt.want)
			}
			if len(p.requests()) != got.Turns {
				t.Errorf("%d requests sent, Result.Turns = %d", len(p.requests()), got.Turns)
			}
			if tt.check != nil {
				tt.check(t, p.requests())
			}
		})
	}
}

func TestRunConfigErrors(t *testing.T) {
	p := &scriptProvider{steps: steps(done("x"))}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no provider", Config{Task: "t"}, "no provider"},
		{"no task", Config{Provider: p}, "empty task"},
		{"negative turns", Config{Provider: p, Task: "t", MaxTurns: -1}, "negative limit"},
		{"negative tokens", Config{Provider: p, Task: "t", MaxTokens: -5}, "negative limit"},
		{"nil tool", Config{Provider: p, Task: "t", Tools: []tools.Tool{nil}}, "tool 0 is nil"},
		{"unnamed tool", Config{Provider: p, Task: "t", Tools: []tools.Tool{&fakeTool{}}}, "has no name"},
		{"duplicate tool", Config{Provider: p, Task: "t", Tools: []tools.Tool{readTool(), readTool()}}, `duplicate tool name "read"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if n := len(p.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid configs", n)
	}
}

func TestRunProviderError(t *testing.T) {
	boom := errors.New("HTTP 529 overloaded")
	p := &scriptProvider{steps: []func(context.Context, *llm.Request) (*llm.Response, error){
		reply(calls(use("1", "read", `{"file_path":"a.md"}`))),
		func(context.Context, *llm.Request) (*llm.Response, error) { return nil, boom },
	}}
	res, err := Run(context.Background(), Config{Provider: p, Task: "t", Tools: defaultTools()})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want wrapped %v", err, boom)
	}
	if res.Stop != StopError || res.Turns != 2 || res.ToolCalls != 1 {
		t.Errorf("Result = %+v", res)
	}

	nilResp := &scriptProvider{steps: []func(context.Context, *llm.Request) (*llm.Response, error){
		func(context.Context, *llm.Request) (*llm.Response, error) { return nil, nil },
	}}
	if _, err := Run(context.Background(), Config{Provider: nilResp, Task: "t"}); err == nil ||
		!strings.Contains(err.Error(), "no response") {
		t.Errorf("nil response: error = %v", err)
	}
}

func TestRunCancel(t *testing.T) {
	t.Run("provider blocked on ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := &scriptProvider{steps: []func(context.Context, *llm.Request) (*llm.Response, error){
			reply(calls(use("1", "read", `{"file_path":"a.md"}`))),
			func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
				// Cancel while the request is in flight, as a kill from
				// another terminal would.
				time.AfterFunc(10*time.Millisecond, cancel)
				<-ctx.Done()
				return nil, fmt.Errorf("request aborted: %w", ctx.Err())
			},
		}}
		start := time.Now()
		res, err := Run(ctx, Config{Provider: p, Task: "t", Tools: defaultTools()})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Run took %v to return after cancel", d)
		}
		if res.Stop != StopCanceled || res.Turns != 2 || res.ToolCalls != 1 {
			t.Errorf("Result = %+v", res)
		}
	})
	t.Run("cancelled by a tool skips the rest of the turn", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		killer := &fakeTool{name: "read", execute: func(context.Context, json.RawMessage) (tools.Result, error) {
			cancel()
			return tools.Result{Content: "ok"}, nil
		}}
		w := writeTool("write")
		p := &scriptProvider{steps: steps(
			calls(use("1", "read", `{"file_path":"a.md"}`), use("2", "write", `{"file_path":"b.md","content":"x"}`)),
			done("never"),
		)}
		res, err := Run(ctx, Config{Provider: p, Task: "t", Tools: []tools.Tool{killer, w}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
		if len(w.inputs) != 0 || res.ToolCalls != 1 || len(res.FilesTouched) != 0 || len(p.requests()) != 1 {
			t.Errorf("write ran %d times, Result = %+v, %d requests", len(w.inputs), res, len(p.requests()))
		}
	})
	t.Run("already cancelled sends nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := &scriptProvider{steps: steps(done("x"))}
		_, err := Run(ctx, Config{Provider: p, Task: "t"})
		if !errors.Is(err, context.Canceled) || len(p.requests()) != 0 {
			t.Errorf("error = %v, %d requests", err, len(p.requests()))
		}
	})
}

func TestRunEvents(t *testing.T) {
	p := &scriptProvider{steps: steps(
		calls(use("1", "read", `{"file_path":"MEMORY.md"}`), use("2", "write", `{"file_path":"a.md","content":"hello"}`),
			use("3", "nope", `{}`)),
		&llm.Response{Content: []llm.Block{
			{Type: llm.BlockText, Text: "Fixing the date\n  in a.md"},
			use("4", "edit", `{"file_path":"a.md","old_string":"x","new_string":"y"}`),
		}, StopReason: llm.StopToolUse, Usage: smallUsage},
		done("Merged two notes."),
	)}
	var got []Event
	_, err := Run(context.Background(), Config{Provider: p, Task: "t", Tools: defaultTools(),
		OnEvent: func(e Event) { got = append(got, e) }})
	if err != nil {
		t.Fatal(err)
	}
	u := func(n int64) llm.Usage { return llm.Usage{InputTokens: 100 * n, OutputTokens: 20 * n} }
	want := []Event{
		{Kind: EventTurn, Turn: 1, Text: `read(file_path=MEMORY.md), write(file_path=a.md content=<5 bytes>), nope()`},
		{Kind: EventUsage, Turn: 1, Usage: u(1)},
		{Kind: EventToolCall, Turn: 1, Tool: "read", Text: "file_path=MEMORY.md"},
		{Kind: EventToolCall, Turn: 1, Tool: "write", Text: "file_path=a.md content=<5 bytes>"},
		{Kind: EventFileTouched, Turn: 1, Path: "a.md"},
		{Kind: EventToolCall, Turn: 1, Tool: "nope", IsError: true,
			Error: `unknown tool "nope"; available tools: read, write, edit`},
		{Kind: EventTurn, Turn: 2, Text: "Fixing the date in a.md"},
		{Kind: EventUsage, Turn: 2, Usage: u(2)},
		{Kind: EventToolCall, Turn: 2, Tool: "edit", Text: "file_path=a.md new_string=<1 bytes> old_string=<1 bytes>"},
		{Kind: EventFileTouched, Turn: 2, Path: "a.md"},
		{Kind: EventTurn, Turn: 3, Text: "Merged two notes."},
		{Kind: EventUsage, Turn: 3, Usage: u(3)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", fmtEvents(got), fmtEvents(want))
	}
}

func fmtEvents(es []Event) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "  %+v\n", e)
	}
	return b.String()
}

// TestRequestsArePrefixes guards prompt-cache friendliness: every request
// must be the previous one plus appended messages, with identical tools and
// system, so that a provider can serve the old part from its cache.
func TestRequestsArePrefixes(t *testing.T) {
	script := []*llm.Response{
		calls(use("1", "read", `{"file_path":"MEMORY.md"}`), use("2", "read", `{"file_path":"a.md"}`)),
		{Content: []llm.Block{{Type: llm.BlockText, Text: ""}, {Type: llm.BlockText, Text: "Merging."},
			use("3", "write", `{"file_path":"a.md","content":"x"}`)}, StopReason: llm.StopToolUse, Usage: smallUsage},
		calls(use("4", "bash", `{}`)),
		calls(use("5", "edit", `{"file_path":"a.md","old_string":"x","new_string":"y"}`)),
		done("Done."),
	}
	p := &scriptProvider{steps: steps(script...)}
	cfg := Config{Provider: p, Model: "m", MaxOutputTokens: 4096, System: "system prompt", Task: "task",
		Tools: defaultTools()}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != len(script) {
		t.Fatalf("%d requests, want %d", len(reqs), len(script))
	}
	first := reqs[0]
	if len(first.Messages) != 1 || first.Messages[0].Role != llm.RoleUser || first.Messages[0].Content[0].Text != "task" {
		t.Fatalf("first request messages = %+v, want only the task", first.Messages)
	}
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1], reqs[i]
		if !reflect.DeepEqual(prev.Tools, cur.Tools) || prev.System != cur.System ||
			prev.Model != cur.Model || prev.MaxTokens != cur.MaxTokens {
			t.Errorf("request %d changed tools, system, model or max_tokens", i+1)
		}
		if len(cur.Messages) != len(prev.Messages)+2 {
			t.Fatalf("request %d has %d messages, want %d", i+1, len(cur.Messages), len(prev.Messages)+2)
		}
		if !reflect.DeepEqual(prev.Messages, cur.Messages[:len(prev.Messages)]) {
			t.Errorf("request %d rewrote an earlier message", i+1)
		}
		asst := cur.Messages[len(prev.Messages)]
		if asst.Role != llm.RoleAssistant || len(asst.Content) == 0 {
			t.Errorf("request %d: appended assistant message = %+v", i+1, asst)
		}
		for _, b := range asst.Content {
			if b.Type == llm.BlockText && b.Text == "" {
				t.Errorf("request %d: empty text block kept in history", i+1)
			}
		}
	}
	// The final request must still equal, byte for byte, what a provider
	// would serialise: check JSON of request 2 is a prefix of request 3's
	// messages JSON without its closing bracket.
	a, _ := json.Marshal(reqs[1].Messages)
	b, _ := json.Marshal(reqs[2].Messages)
	if !strings.HasPrefix(string(b), string(a[:len(a)-1])) {
		t.Errorf("serialised messages of request 2 are not a prefix of request 3's")
	}
}
