package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func testProvider(t *testing.T, baseURL string, stream bool) *Provider {
	t.Helper()
	p, err := New(Options{BaseURL: baseURL, Model: "claude-test", Stream: stream, MaxRetries: 2, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// conversation is a request with every block kind and three user messages,
// so that only the newest user message may carry a breakpoint.
func conversation() *llm.Request {
	return &llm.Request{
		System: "You consolidate memory.",
		Tools: []llm.Tool{
			{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"],"additionalProperties":false}`)},
			{Name: "ls", Description: "List a directory.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "Begin."}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "Reading."}, {Type: llm.BlockToolUse, ID: "toolu_1", Name: "read", Input: json.RawMessage(`{"file_path":"MEMORY.md"}`)}}},
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ID: "toolu_1", Text: "- [Build](build.md)"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ID: "toolu_2", Name: "ls", Input: json.RawMessage(`{}`)}}},
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ID: "toolu_2", Text: "permission denied", IsError: true}, {Type: llm.BlockText, Text: ""}, {Type: llm.BlockText, Text: "Go on."}}},
		},
	}
}

// TestRequestGolden pins the request body the SDK sends for conversation().
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

// TestCacheBreakpoints checks the three breakpoints and that nothing else
// carries one: system, last tool, last block of the newest user message.
func TestCacheBreakpoints(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Text: "ok"})
			defer srv.Close()
			if _, err := testProvider(t, srv.URL, stream).Complete(context.Background(), conversation()); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].Body
			var doc struct {
				System []struct {
					CacheControl *struct{ Type string } `json:"cache_control"`
				} `json:"system"`
				Tools []struct {
					CacheControl *struct{ Type string } `json:"cache_control"`
				} `json:"tools"`
				Messages []struct {
					Content []struct {
						Type         string
						CacheControl *struct{ Type string } `json:"cache_control"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(body, []byte(`"cache_control"`)); n != 3 {
				t.Errorf("%d cache_control markers, want 3", n)
			}
			if len(doc.System) != 1 || doc.System[0].CacheControl == nil || doc.System[0].CacheControl.Type != "ephemeral" {
				t.Error("system prompt has no ephemeral breakpoint")
			}
			if len(doc.Tools) != 2 || doc.Tools[0].CacheControl != nil || doc.Tools[1].CacheControl == nil {
				t.Error("breakpoint not on the last tool only")
			}
			last := doc.Messages[len(doc.Messages)-1].Content
			if len(last) != 2 || last[1].CacheControl == nil || last[1].Type != "text" {
				t.Errorf("newest user message %+v: want its last block marked and the empty text dropped", last)
			}
		})
	}
}

func TestCompleteMapsResponse(t *testing.T) {
	srv := llmtest.NewServer(
		llmtest.Turn{Text: "cut", StopReason: llm.StopMaxTokens},
		llmtest.Turn{Text: "no", StopReason: llm.StopOther},
	)
	defer srv.Close()
	p := testProvider(t, srv.URL, true)
	for _, want := range []llm.StopReason{llm.StopMaxTokens, llm.StopOther} {
		resp, err := p.Complete(context.Background(), conversation())
		if err != nil {
			t.Fatal(err)
		}
		if resp.StopReason != want {
			t.Errorf("stop reason %q, want %q", resp.StopReason, want)
		}
	}
}

func TestStopReason(t *testing.T) {
	tests := map[sdk.StopReason]llm.StopReason{
		sdk.StopReasonEndTurn:                    llm.StopEndTurn,
		sdk.StopReasonStopSequence:               llm.StopEndTurn,
		sdk.StopReasonToolUse:                    llm.StopToolUse,
		sdk.StopReasonMaxTokens:                  llm.StopMaxTokens,
		sdk.StopReasonModelContextWindowExceeded: llm.StopMaxTokens,
		sdk.StopReasonPauseTurn:                  llm.StopOther,
		sdk.StopReasonRefusal:                    llm.StopOther,
		"":                                       llm.StopOther,
	}
	for in, want := range tests {
		if got := stopReason(in); got != want {
			t.Errorf("stopReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParamsErrors(t *testing.T) {
	p, err := New(Options{APIKey: "k", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	user := func(b ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleUser, Content: b} }
	text := llm.Block{Type: llm.BlockText, Text: "x"}
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"no messages", llm.Request{}, "no messages"},
		{"empty message", llm.Request{Messages: []llm.Message{user(llm.Block{Type: llm.BlockText})}}, "has no content"},
		{"bad role", llm.Request{Messages: []llm.Message{{Role: "system", Content: []llm.Block{text}}}}, "unknown role"},
		{"bad block", llm.Request{Messages: []llm.Message{user(llm.Block{Type: "image"})}}, "unknown block type"},
		{"tool_use without id", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, Name: "read"}}}}}, "needs an id"},
		{"invalid input", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ID: "1", Name: "read", Input: json.RawMessage("{")}}}}}, "not valid JSON"},
		{"result without id", llm.Request{Messages: []llm.Message{user(llm.Block{Type: llm.BlockToolResult})}}, "needs the id"},
		{"schema not object", llm.Request{Tools: []llm.Tool{{Name: "t", InputSchema: json.RawMessage(`[1]`)}}, Messages: []llm.Message{user(text)}}, "not a JSON object"},
		{"schema type string", llm.Request{Tools: []llm.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"string"}`)}}, Messages: []llm.Message{user(text)}}, "want object"},
		{"schema required", llm.Request{Tools: []llm.Tool{{Name: "t", InputSchema: json.RawMessage(`{"required":"x"}`)}}, Messages: []llm.Message{user(text)}}, "not an array"},
		{"nameless tool", llm.Request{Tools: []llm.Tool{{}}, Messages: []llm.Message{user(text)}}, "no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Complete(context.Background(), &tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "anthropic: ") {
				t.Errorf("Complete = %v, want an anthropic error containing %q", err, tt.want)
			}
		})
	}
	if _, err := p.Complete(context.Background(), nil); err == nil {
		t.Error("nil request accepted")
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no model", Options{APIKey: "k"}, "--model"},
		{"no key no base", Options{Model: "m"}, "ANTHROPIC_API_KEY"},
		{"bad scheme", Options{Model: "m", BaseURL: "ftp://x"}, "http or https"},
		{"no host", Options{Model: "m", BaseURL: "http://"}, "no host"},
		{"negative max tokens", Options{Model: "m", APIKey: "k", MaxTokens: -1}, "negative"},
	}
	for _, tt := range tests {
		if _, err := New(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1"}); err != nil {
		t.Errorf("keyless local server refused: %v", err)
	}
	if DefaultModel == "" {
		t.Error("DefaultModel is empty")
	}
}

// TestAPIKeySent checks that the key goes out (this SDK version sends it as
// a bearer token; older ones used x-api-key) and that no environment
// credential leaks in when none is configured.
func TestAPIKeySent(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	srv := llmtest.NewServer(llmtest.Turn{Text: "a"}, llmtest.Turn{Text: "b"})
	defer srv.Close()
	withKey, err := New(Options{APIKey: "sk-test", BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	keyless := testProvider(t, srv.URL, false)
	for _, p := range []*Provider{withKey, keyless} {
		if _, err := p.Complete(context.Background(), conversation()); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	h := reqs[0].Header
	if h.Get("X-Api-Key") != "sk-test" && h.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("key not sent: x-api-key %q, authorization %q", h.Get("X-Api-Key"), h.Get("Authorization"))
	}
	h = reqs[1].Header
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("keyless provider sent a credential from the environment: %v", h)
	}
}

// sseServer answers every request with the given raw event stream.
func sseServer(t *testing.T, events string) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(events))
	}))
}

const messageStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name       string
		events     string
		wantStatus int
		retryable  bool
	}{
		{"overloaded event", messageStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", 529, true},
		{"invalid request event", messageStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n", 400, false},
		{"cut short", messageStart + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := sseServer(t, tt.events)
			defer srv.Close()
			p := testProvider(t, srv.URL, true)
			_, err := p.Complete(context.Background(), conversation())
			if err == nil || llm.IsRetryable(err) != tt.retryable {
				t.Fatalf("error = %v, want retryable=%v", err, tt.retryable)
			}
			var apiErr *llm.APIError
			if tt.wantStatus != 0 && (!errors.As(err, &apiErr) || apiErr.Status != tt.wantStatus) {
				t.Errorf("error = %v, want an APIError with status %d", err, tt.wantStatus)
			}
			if tt.wantStatus == 0 && !errors.Is(err, llm.ErrIncompleteStream) {
				t.Errorf("error = %v, want ErrIncompleteStream", err)
			}
		})
	}
}
