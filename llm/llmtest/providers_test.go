package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/llm/openai"
)

// config is what the conformance tests vary; each provider maps it onto its
// own Options.
type config struct {
	baseURL, model string
	stream         bool
	maxRetries     int
	timeout        time.Duration
}

type providerCase struct {
	name   string
	stream bool
	build  func(c config) (llm.Provider, error)
}

// cases is every provider in both modes: the same behaviour is expected of
// all four.
func cases() []providerCase {
	anth := func(c config) (llm.Provider, error) {
		return anthropic.New(anthropic.Options{BaseURL: c.baseURL, Model: c.model, Stream: c.stream, MaxRetries: c.maxRetries, RequestTimeout: c.timeout, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	}
	oai := func(c config) (llm.Provider, error) {
		return openai.New(openai.Options{BaseURL: c.baseURL + "/v1", Model: c.model, Stream: c.stream, MaxRetries: c.maxRetries, RequestTimeout: c.timeout, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	}
	return []providerCase{
		{"anthropic", false, anth}, {"anthropic_stream", true, anth},
		{"openai", false, oai}, {"openai_stream", true, oai},
	}
}

func newProvider(t testing.TB, pc providerCase, srv *llmtest.Server, mod func(*config)) llm.Provider {
	t.Helper()
	c := config{baseURL: srv.URL, model: "test-model", stream: pc.stream, maxRetries: 2}
	if mod != nil {
		mod(&c)
	}
	p, err := pc.build(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

var readTool = llm.Tool{
	Name:        "read",
	Description: "Read a file.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`),
}

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
}

func TestProvidersTextTurn(t *testing.T) {
	scripted := llm.Usage{InputTokens: 12, OutputTokens: 7, CacheReadInputTokens: 100, CacheCreationInputTokens: 20}
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Text: "Merged the two notes on the build system into one.", Usage: scripted})
			defer srv.Close()
			p := newProvider(t, pc, srv, nil)
			resp, err := p.Complete(context.Background(), &llm.Request{System: "You consolidate memory.", Tools: []llm.Tool{readTool}, Messages: []llm.Message{userText("Begin.")}})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text() != "Merged the two notes on the build system into one." || resp.StopReason != llm.StopEndTurn || len(resp.ToolCalls()) != 0 {
				t.Errorf("response = %+v", resp)
			}
			want := scripted
			if strings.HasPrefix(pc.name, "openai") {
				// The OpenAI wire has no cache-creation count: it arrives as
				// plain input.
				want.InputTokens += want.CacheCreationInputTokens
				want.CacheCreationInputTokens = 0
			}
			if resp.Usage != want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, want)
			}
			if resp.Model != "test-model" {
				t.Errorf("model = %q", resp.Model)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Stream != pc.stream {
				t.Fatalf("requests = %d, stream = %v; want 1, %v", len(reqs), reqs[0].Stream, pc.stream)
			}
		})
	}
}

// TestProvidersToolRoundTrip checks a tool call coming in and its failed
// result going back out on the wire, marked as an error in each protocol's
// way.
func TestProvidersToolRoundTrip(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(
				llmtest.Turn{Text: "Let me look.", Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": "notes/über.md"}}}},
				llmtest.Turn{Text: "The file is gone; dropping the pointer."},
			)
			defer srv.Close()
			p := newProvider(t, pc, srv, nil)
			req := &llm.Request{System: "sys", Tools: []llm.Tool{readTool}, Messages: []llm.Message{userText("Begin.")}}
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatalf("first Complete: %v", err)
			}
			calls := resp.ToolCalls()
			if resp.StopReason != llm.StopToolUse || len(calls) != 1 || calls[0].Name != "read" || calls[0].ID == "" {
				t.Fatalf("first response = %+v", resp)
			}
			var in struct {
				FilePath string `json:"file_path"`
			}
			if err := json.Unmarshal(calls[0].Input, &in); err != nil || in.FilePath != "notes/über.md" {
				t.Fatalf("tool input %s: %v", calls[0].Input, err)
			}
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: resp.Content},
				llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ID: calls[0].ID, Text: "no such file", IsError: true}}},
			)
			resp, err = p.Complete(context.Background(), req)
			if err != nil {
				t.Fatalf("second Complete: %v", err)
			}
			if resp.StopReason != llm.StopEndTurn || !strings.Contains(resp.Text(), "dropping") {
				t.Errorf("second response = %+v", resp)
			}
			body := srv.Requests()[1].Body
			if strings.HasPrefix(pc.name, "anthropic") {
				checkAnthropicToolResult(t, body, calls[0].ID)
			} else {
				checkOpenAIToolResult(t, body, calls[0].ID)
			}
		})
	}
}

func checkAnthropicToolResult(t *testing.T, body []byte, id string) {
	t.Helper()
	var doc struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Messages) != 3 {
		t.Fatalf("second request body %s: %v", body, err)
	}
	last := doc.Messages[2].Content
	if doc.Messages[2].Role != "user" || len(last) != 1 || last[0].Type != "tool_result" || last[0].ToolUseID != id || !last[0].IsError ||
		len(last[0].Content) != 1 || last[0].Content[0].Text != "no such file" {
		t.Errorf("tool_result on the wire = %+v", last)
	}
	if u := doc.Messages[1].Content; len(u) != 2 || u[1].Type != "tool_use" || u[1].ID != id {
		t.Errorf("assistant tool_use on the wire = %+v", u)
	}
}

func checkOpenAIToolResult(t *testing.T, body []byte, id string) {
	t.Helper()
	var doc struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Messages) != 4 {
		t.Fatalf("second request body %s: %v", body, err)
	}
	if m := doc.Messages[0]; m.Role != "system" || m.Content != "sys" {
		t.Errorf("first message = %+v, want the system prompt", m)
	}
	if a := doc.Messages[2]; a.Role != "assistant" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != id || a.ToolCalls[0].Function.Arguments != `{"file_path":"notes/über.md"}` {
		t.Errorf("assistant message = %+v", a)
	}
	if m := doc.Messages[3]; m.Role != "tool" || m.ToolCallID != id || m.Content != "ERROR: no such file" {
		t.Errorf("tool message = %+v", m)
	}
}

func TestProvidersRetryAfter(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(llmtest.Turn{Status: 429, RetryAfter: "1"}, llmtest.Turn{Text: "ok"})
			defer srv.Close()
			p := newProvider(t, pc, srv, nil)
			start := time.Now()
			resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{userText("go")}})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text() != "ok" || len(srv.Requests()) != 2 {
				t.Errorf("text %q after %d requests, want ok after 2", resp.Text(), len(srv.Requests()))
			}
			if elapsed < 900*time.Millisecond || elapsed > 5*time.Second {
				t.Errorf("took %v, want about the 1s Retry-After", elapsed)
			}
		})
	}
}

func TestProvidersPersistentServerError(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Status: 500, Repeat: -1})
			defer srv.Close()
			p := newProvider(t, pc, srv, nil)
			start := time.Now()
			_, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{userText("go")}})
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %v", el)
			}
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != 500 || apiErr.Provider != p.Name() || !llm.IsRetryable(err) {
				t.Fatalf("error = %v, want a retryable 500 APIError from %s", err, p.Name())
			}
			if !strings.Contains(err.Error(), p.Name()+": 500") || !strings.Contains(err.Error(), "3 attempts") {
				t.Errorf("error text %q", err)
			}
			if n := len(srv.Requests()); n != 3 {
				t.Errorf("%d requests, want 1 + 2 retries", n)
			}
		})
	}
}

func TestProvidersUnauthorizedNotRetried(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Status: 401, Repeat: -1})
			defer srv.Close()
			p := newProvider(t, pc, srv, nil)
			_, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{userText("go")}})
			want := p.Name() + ": 401 llmtest: scripted error 401"
			if err == nil || err.Error() != want || llm.IsRetryable(err) {
				t.Fatalf("error = %v, want %q, not retryable", err, want)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestProvidersCancelDuringDelay(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Delay: 30 * time.Second, Text: "late"})
			defer srv.Close()
			p := newProvider(t, pc, srv, nil)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := p.Complete(ctx, &llm.Request{Messages: []llm.Message{userText("go")}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want context.Canceled", err)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("cancel took %v", el)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1: a cancelled call is not retried", n)
			}
		})
	}
}

func TestProvidersAttemptTimeoutRetried(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Delay: 30 * time.Second, Text: "stalled"}, llmtest.Turn{Text: "fast"})
			defer srv.Close()
			p := newProvider(t, pc, srv, func(c *config) { c.timeout = 200 * time.Millisecond })
			resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{userText("go")}})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text() != "fast" {
				t.Errorf("text = %q, want the retry's answer", resp.Text())
			}
		})
	}
}

func TestProvidersScriptExhausted(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer()
			defer srv.Close()
			p := newProvider(t, pc, srv, func(c *config) { c.maxRetries = -1 })
			_, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{userText("go")}})
			if err == nil || !strings.Contains(err.Error(), "llmtest: script exhausted") {
				t.Fatalf("error = %v, want the exhausted script named", err)
			}
		})
	}
}

func TestProvidersMissingModel(t *testing.T) {
	for _, pc := range cases() {
		_, err := pc.build(config{baseURL: "http://127.0.0.1:1"})
		if err == nil || !strings.Contains(err.Error(), "--model") || !strings.Contains(err.Error(), "DREAM_MODEL") {
			t.Errorf("%s: New without a model = %v, want an error naming --model and DREAM_MODEL", pc.name, err)
		}
	}
}

// TestProvidersCacheReadGrows drives three turns of one conversation and
// checks that the synthesised usage reports most of each later request as
// read from cache, through each provider's own usage mapping.
func TestProvidersCacheReadGrows(t *testing.T) {
	for _, pc := range cases() {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Text: "one"}, llmtest.Turn{Text: "two"})
			defer srv.Close()
			p := newProvider(t, pc, srv, nil)
			req := &llm.Request{System: strings.Repeat("Keep memory tidy. ", 100), Tools: []llm.Tool{readTool}, Messages: []llm.Message{userText("Begin.")}}
			first, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: first.Content}, userText("Continue."))
			second, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if first.Usage.CacheReadInputTokens != 0 || first.Usage.Total() == 0 {
				t.Errorf("first usage %+v", first.Usage)
			}
			if r := second.Usage.CacheHitRate(); r < 0.8 {
				t.Errorf("second usage %+v: cache hit rate %.2f, want >= 0.8", second.Usage, r)
			}
		})
	}
}
