package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func testProvider(t *testing.T, baseURL string, stream bool) *Provider {
	t.Helper()
	p, err := New(Options{BaseURL: baseURL, Model: "gpt-test", Stream: stream, MaxRetries: 2, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func conversation() *llm.Request {
	return &llm.Request{
		System:    "You consolidate memory.",
		MaxTokens: 1000,
		Tools: []llm.Tool{
			{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)},
			{Name: "ls"},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "Begin."}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockText, Text: "Reading both."},
				{Type: llm.BlockToolUse, ID: "call_1", Name: "read", Input: json.RawMessage(`{"file_path":"MEMORY.md"}`)},
				{Type: llm.BlockToolUse, ID: "call_2", Name: "ls"},
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				{Type: llm.BlockText, Text: "Note: the repo moved."},
				{Type: llm.BlockToolResult, ID: "call_1", Text: "- [Build](build.md)"},
				{Type: llm.BlockToolResult, ID: "call_2", Text: "permission denied", IsError: true},
			}},
		},
	}
}

// TestRequestGolden pins the body: system first, tool results as "tool"
// messages right after the assistant's calls (ERROR: prefix for the failed
// one), the user's text after them, max_tokens for a non-OpenAI server.
func TestRequestGolden(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Text: "ok"})
	defer srv.Close()
	if _, err := testProvider(t, srv.URL, false).Complete(context.Background(), conversation()); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, srv.Requests()[0].Body, "", "  "); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "request.golden.json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("request body differs from %s:\n%s", golden, got.Bytes())
	}
}

func TestMaxTokensField(t *testing.T) {
	tests := []struct {
		baseURL string
		legacy  bool
	}{
		{"", false},
		{"https://api.openai.com/v1", false},
		{"https://myorg.openai.azure.com/openai", false},
		{"http://localhost:11434/v1", true},
		{"https://openrouter.example/api/v1", true},
	}
	for _, tt := range tests {
		p, err := New(Options{APIKey: "k", BaseURL: tt.baseURL, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		params, err := p.params(conversation())
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		hasLegacy := bytes.Contains(body, []byte(`"max_tokens":1000`))
		hasNew := bytes.Contains(body, []byte(`"max_completion_tokens":1000`))
		if hasLegacy != tt.legacy || hasNew == tt.legacy {
			t.Errorf("base URL %q: max_tokens=%v max_completion_tokens=%v, want legacy=%v", tt.baseURL, hasLegacy, hasNew, tt.legacy)
		}
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want llm.Usage
	}{
		{"plain", `{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}`, llm.Usage{InputTokens: 100, OutputTokens: 20}},
		{"cached", `{"prompt_tokens":100,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":64}}`, llm.Usage{InputTokens: 36, OutputTokens: 20, CacheReadInputTokens: 64}},
		{"cache write", `{"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":10,"cache_write_tokens":50}}`, llm.Usage{InputTokens: 40, OutputTokens: 1, CacheReadInputTokens: 10, CacheCreationInputTokens: 50}},
		{"inconsistent server", `{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":64}}`, llm.Usage{InputTokens: 0, OutputTokens: 1, CacheReadInputTokens: 64}},
	}
	for _, tt := range tests {
		var u sdk.CompletionUsage
		if err := json.Unmarshal([]byte(tt.in), &u); err != nil {
			t.Fatal(err)
		}
		if got := usage(u); got != tt.want {
			t.Errorf("%s: usage = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestFinishReason(t *testing.T) {
	tests := []struct {
		in    string
		calls bool
		want  llm.StopReason
	}{
		{"stop", false, llm.StopEndTurn},
		{"", false, llm.StopEndTurn},
		{"tool_calls", true, llm.StopToolUse},
		{"function_call", true, llm.StopToolUse},
		{"stop", true, llm.StopToolUse}, // older Ollama
		{"length", true, llm.StopMaxTokens},
		{"content_filter", false, llm.StopOther},
		{"weird", false, llm.StopOther},
	}
	for _, tt := range tests {
		if got := finishReason(tt.in, tt.calls); got != tt.want {
			t.Errorf("finishReason(%q, %v) = %q, want %q", tt.in, tt.calls, got, tt.want)
		}
	}
}

// TestInvalidArgumentsRoundTrip: a small local model sends arguments that
// are not JSON; the block must still marshal, and the arguments must go back
// to the model exactly as it wrote them.
func TestInvalidArgumentsRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewServer(
			llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: json.RawMessage(`{"file_path": MEMORY.md`)}}},
			llmtest.Turn{Text: "sorry"},
		)
		p := testProvider(t, srv.URL, stream)
		req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "go"}}}}}
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		call := resp.ToolCalls()[0]
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("response with bad arguments does not marshal: %v", err)
		}
		var s string
		if err := json.Unmarshal(call.Input, &s); err != nil || s != `{"file_path": MEMORY.md` {
			t.Fatalf("input = %s, want the bad arguments as a JSON string", call.Input)
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ID: call.ID, Text: "input is not JSON", IsError: true}}})
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if body := srv.Requests()[1].Body; !bytes.Contains(body, []byte(`"arguments":"{\"file_path\": MEMORY.md"`)) {
			t.Errorf("replayed arguments changed: %s", body)
		}
		srv.Close()
	}
}

func TestParamsErrors(t *testing.T) {
	p, err := New(Options{APIKey: "k", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	text := llm.Block{Type: llm.BlockText, Text: "x"}
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"no messages", llm.Request{}, "no messages"},
		{"empty user", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText}}}}}, "has no content"},
		{"bad role", llm.Request{Messages: []llm.Message{{Role: "system", Content: []llm.Block{text}}}}, "unknown role"},
		{"result from assistant", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolResult, ID: "1"}}}}}, "tool_result in a assistant"},
		{"call from user", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolUse, ID: "1", Name: "x"}}}}}, "tool_use in a user"},
		{"bad block", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: "image"}}}}}, "unknown block type"},
		{"bad schema", llm.Request{Tools: []llm.Tool{{Name: "t", InputSchema: json.RawMessage(`"s"`)}}, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{text}}}}, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Complete(context.Background(), &tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "openai: ") {
				t.Errorf("Complete = %v, want an openai error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no model", Options{APIKey: "k"}, "--model"},
		{"no key no base", Options{Model: "m"}, "OPENAI_API_KEY"},
		{"bad scheme", Options{Model: "m", BaseURL: "localhost:11434"}, "http or https"},
		{"negative max tokens", Options{Model: "m", APIKey: "k", MaxTokens: -5}, "negative"},
	}
	for _, tt := range tests {
		if _, err := New(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	if DefaultModel == "" {
		t.Error("DefaultModel is empty")
	}
}

// TestCredentials checks the bearer token and that ambient OPENAI_*
// settings never reach a server the caller did not configure them for.
func TestCredentials(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "from-env")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	srv := llmtest.NewServer(llmtest.Turn{Text: "a"}, llmtest.Turn{Text: "b"})
	defer srv.Close()
	withKey, err := New(Options{APIKey: "sk-test", BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Provider{withKey, testProvider(t, srv.URL, false)} {
		if _, err := p.Complete(context.Background(), conversation()); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("authorization = %q", got)
	}
	if got := reqs[1].Header.Get("Authorization"); got != "" {
		t.Errorf("keyless provider sent %q", got)
	}
	for _, r := range reqs {
		if r.Header.Get("Openai-Organization") != "" {
			t.Errorf("OPENAI_ORG_ID leaked: %v", r.Header)
		}
	}
}

func TestStreamErrors(t *testing.T) {
	first := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"par"},"finish_reason":null}]}` + "\n\n"
	tests := []struct {
		name      string
		events    string
		retryable bool
		is        error
	}{
		{"cut short", first, true, llm.ErrIncompleteStream},
		{"error event", first + `data: {"error":{"message":"model crashed","type":"server_error"}}` + "\n\n", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(tt.events))
			}))
			defer srv.Close()
			_, err := testProvider(t, srv.URL, true).Complete(context.Background(), conversation())
			if err == nil || llm.IsRetryable(err) != tt.retryable || !strings.HasPrefix(err.Error(), "openai: ") {
				t.Fatalf("error = %v, want retryable=%v", err, tt.retryable)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error = %v, want %v", err, tt.is)
			}
		})
	}
}

// TestPlainTextErrorBody: local servers answer errors in plain text; the
// status and message must survive the SDK, which expects JSON.
func TestPlainTextErrorBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "model is loading, try again", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, err := testProvider(t, srv.URL, false).Complete(context.Background(), conversation())
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 || apiErr.Message != "model is loading, try again" {
		t.Fatalf("error = %v, want a 503 APIError with the server's text", err)
	}
}
