package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// post sends body to path and returns status, headers and body.
func post(t *testing.T, ctx context.Context, url, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return res.StatusCode, res.Header, string(b)
}

const (
	anthropicReq       = `{"model":"m","max_tokens":100,"system":[{"type":"text","text":"sys"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	anthropicStreamReq = `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	openaiReq          = `{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}]}`
	openaiStreamReq    = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	responsesReq       = `{"model":"m","instructions":"sys","input":[{"role":"user","content":"hi"}]}`
	responsesStreamReq = `{"model":"m","stream":true,"input":"hi"}`
	geminiReq          = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"sys"}]}}`
)

var createdRE = regexp.MustCompile(`"created(_at)?":\d+`)

// TestWireGolden pins the exact bytes of every answer shape, JSON and
// streamed, for both protocols: these are what the SDKs parse.
func TestWireGolden(t *testing.T) {
	textTurn := Turn{Text: "Merged the two notes on the build system into one.", Usage: llm.Usage{InputTokens: 12, OutputTokens: 7, CacheReadInputTokens: 100, CacheCreationInputTokens: 20}}
	toolTurn := Turn{Text: "Reading the index.", Calls: []Call{
		{Name: "read", Input: map[string]any{"file_path": "MEMORY.md"}},
		{ID: "fixed_id", Name: "grep", Input: map[string]any{"pattern": "TODO", "path": "src/über"}},
	}, Usage: llm.Usage{InputTokens: 30, OutputTokens: 9}}
	tests := []struct {
		name, path, body string
		turn             Turn
	}{
		{"anthropic_text", "/v1/messages", anthropicReq, textTurn},
		{"anthropic_tools", "/v1/messages", anthropicReq, toolTurn},
		{"anthropic_text_stream", "/v1/messages", anthropicStreamReq, textTurn},
		{"anthropic_tools_stream", "/messages", anthropicStreamReq, toolTurn},
		{"anthropic_error", "/v1/messages", anthropicReq, Turn{Status: 529}},
		{"openai_text", "/v1/chat/completions", openaiReq, textTurn},
		{"openai_tools", "/chat/completions", openaiReq, toolTurn},
		{"openai_text_stream", "/v1/chat/completions", openaiStreamReq, textTurn},
		{"openai_tools_stream", "/v1/chat/completions", openaiStreamReq, toolTurn},
		{"openai_error", "/v1/chat/completions", openaiReq, Turn{Status: 429, RetryAfter: "7"}},
		{"responses_text", "/v1/responses", responsesReq, textTurn},
		{"responses_tools", "/responses", responsesReq, toolTurn},
		{"responses_text_stream", "/v1/responses", responsesStreamReq, textTurn},
		{"responses_tools_stream", "/v1/responses", responsesStreamReq, toolTurn},
		{"responses_max_tokens_stream", "/v1/responses", responsesStreamReq, Turn{Text: "cut short", StopReason: llm.StopMaxTokens, Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}}},
		{"responses_error", "/v1/responses", responsesReq, Turn{Status: 500}},
		{"gemini_text", "/v1beta/models/m:generateContent", geminiReq, textTurn},
		{"gemini_tools", "/v1beta/models/m:generateContent", geminiReq, toolTurn},
		{"gemini_text_stream", "/v1beta/models/m:streamGenerateContent?alt=sse", geminiReq, textTurn},
		{"gemini_tools_stream", "/v1beta/models/m:streamGenerateContent?alt=sse", geminiReq, toolTurn},
		{"gemini_error", "/v1beta/models/m:generateContent", geminiReq, Turn{Status: 503}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(tt.turn)
			defer s.Close()
			status, h, body := post(t, context.Background(), s.URL+tt.path, tt.body)
			got := fmt.Sprintf("status: %d\ncontent-type: %s\nretry-after: %s\n\n%s", status, h.Get("Content-Type"), h.Get("Retry-After"), createdRE.ReplaceAllString(body, `"created$1":0`))
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("answer differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

func TestScriptExhausted(t *testing.T) {
	for _, tt := range []struct{ path, body string }{
		{"/v1/messages", anthropicReq}, {"/v1/chat/completions", openaiReq},
		{"/v1/responses", responsesReq}, {"/v1beta/models/m:generateContent", geminiReq},
	} {
		s := NewServer()
		status, _, body := post(t, context.Background(), s.URL+tt.path, tt.body)
		s.Close()
		if status != 500 || !strings.Contains(body, "llmtest: script exhausted") {
			t.Errorf("%s: exhausted script answered %d %s", tt.path, status, body)
		}
	}
}

func TestRepeatRemainingAppend(t *testing.T) {
	s := NewServer(Turn{Status: 503, Repeat: 2}, Turn{Text: "a"})
	defer s.Close()
	if got := s.Remaining(); got != 2 {
		t.Fatalf("Remaining = %d, want 2", got)
	}
	want := []int{503, 503, 200, 500}
	for i, w := range want {
		status, _, _ := post(t, context.Background(), s.URL+"/v1/messages", anthropicReq)
		if status != w {
			t.Fatalf("request %d: status %d, want %d", i+1, status, w)
		}
	}
	if got := s.Remaining(); got != 0 {
		t.Errorf("Remaining = %d, want 0", got)
	}
	s.Append(Turn{Status: 500, Repeat: -1})
	for range 3 {
		if status, _, _ := post(t, context.Background(), s.URL+"/v1/messages", anthropicReq); status != 500 {
			t.Fatalf("forever turn answered %d", status)
		}
	}
	if got := s.Remaining(); got != 1 {
		t.Errorf("Remaining with a forever turn = %d, want 1", got)
	}
	if got := len(s.Requests()); got != 7 {
		t.Errorf("recorded %d requests, want 7", got)
	}
}

func TestDynamicTurn(t *testing.T) {
	s := NewServer(Turn{Dynamic: func(req Recorded) Turn {
		return Turn{Text: fmt.Sprintf("%s stream=%v len=%d", req.Protocol, req.Stream, len(req.Body))}
	}})
	defer s.Close()
	_, _, body := post(t, context.Background(), s.URL+"/v1/chat/completions", openaiReq)
	if want := fmt.Sprintf("openai stream=false len=%d", len(openaiReq)); !strings.Contains(body, want) {
		t.Errorf("dynamic answer %s does not contain %q", body, want)
	}
}

func TestRequestsRecorded(t *testing.T) {
	s := NewServer(Turn{Text: "a"}, Turn{Text: "b"})
	defer s.Close()
	post(t, context.Background(), s.URL+"/v1/messages", anthropicStreamReq)
	post(t, context.Background(), s.URL+"/chat/completions", openaiReq)
	got := s.Requests()
	if len(got) != 2 {
		t.Fatalf("recorded %d requests", len(got))
	}
	if got[0].Protocol != ProtocolAnthropic || !got[0].Stream || got[0].Path != "/v1/messages" || string(got[0].Body) != anthropicStreamReq {
		t.Errorf("first request recorded as %+v", got[0])
	}
	if got[1].Protocol != ProtocolOpenAI || got[1].Stream || got[1].Header.Get("Content-Type") != "application/json" {
		t.Errorf("second request recorded as %+v", got[1])
	}
	got[0].Body[0] = 'X'
	if s.Requests()[0].Body[0] == 'X' {
		t.Error("Requests returned the server's own buffer")
	}
}

func TestBadRequests(t *testing.T) {
	s := NewServer(Turn{Text: "kept"})
	defer s.Close()
	tests := []struct {
		name, path, body string
		want             int
	}{
		{"unknown path", "/v1/embeddings", openaiReq, 404},
		{"not json", "/v1/messages", "{", 400},
		{"no model", "/v1/chat/completions", `{"messages":[]}`, 400},
		{"responses without a model", "/v1/responses", `{"input":"hi"}`, 400},
		{"gemini not json", "/v1beta/models/m:streamGenerateContent", "[", 400},
	}
	for _, tt := range tests {
		status, _, body := post(t, context.Background(), s.URL+tt.path, tt.body)
		if status != tt.want {
			t.Errorf("%s: status %d (%s), want %d", tt.name, status, body, tt.want)
		}
	}
	res, err := http.Get(s.URL + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d", res.StatusCode)
	}
	if s.Remaining() != 1 {
		t.Errorf("a bad request consumed a script turn")
	}
}

func TestDelayEndsWithClient(t *testing.T) {
	s := NewServer(Turn{Delay: time.Minute, Text: "late"})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/messages", strings.NewReader(anthropicReq))
	start := time.Now()
	_, err := http.DefaultClient.Do(req)
	if err == nil {
		t.Fatal("request during a one-minute delay succeeded")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("cancel took %v", el)
	}
}

func TestCloseEndsDelay(t *testing.T) {
	s := NewServer(Turn{Delay: time.Minute, Text: "late"})
	go func() {
		time.Sleep(100 * time.Millisecond)
		s.Close()
	}()
	start := time.Now()
	res, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(anthropicReq))
	if err == nil {
		res.Body.Close()
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Close during a delay took %v", el)
	}
	s.Close() // idempotent
}

// TestSynthesisedUsage checks that a request extending the previous one is
// reported as mostly read from cache, as a real prompt cache would.
func TestSynthesisedUsage(t *testing.T) {
	type usageDoc struct {
		Usage struct {
			InputTokens   int64 `json:"input_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
			OutputTokens  int64 `json:"output_tokens"`
			PromptTokens  int64 `json:"prompt_tokens"`
			Details       struct {
				Cached int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	long := strings.Repeat("memory note ", 200)
	first := `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"` + long + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"go","cache_control":{"type":"ephemeral"}}]}]}`
	second := `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"` + long + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"go"}]},{"role":"assistant","content":[{"type":"text","text":"ok"}]},{"role":"user","content":[{"type":"text","text":"more","cache_control":{"type":"ephemeral"}}]}]}`
	s := NewServer(Turn{Text: "ok"}, Turn{Text: "done"})
	defer s.Close()
	var u1, u2 usageDoc
	for i, body := range []string{first, second} {
		_, _, ans := post(t, context.Background(), s.URL+"/v1/messages", body)
		if err := json.Unmarshal([]byte(ans), []*usageDoc{&u1, &u2}[i]); err != nil {
			t.Fatal(err)
		}
	}
	if u1.Usage.CacheRead != 0 || u1.Usage.CacheCreation == 0 || u1.Usage.OutputTokens == 0 {
		t.Errorf("first request usage %+v: want all written to cache, none read", u1.Usage)
	}
	total2 := u2.Usage.InputTokens + u2.Usage.CacheRead + u2.Usage.CacheCreation
	if u2.Usage.CacheRead*10 < total2*8 {
		t.Errorf("second request usage %+v: want most of it read from cache", u2.Usage)
	}

	o := NewServer(Turn{Text: "ok"}, Turn{Text: "done"})
	defer o.Close()
	oFirst := `{"model":"m","messages":[{"role":"system","content":"` + long + `"},{"role":"user","content":"go"}]}`
	oSecond := `{"model":"m","messages":[{"role":"system","content":"` + long + `"},{"role":"user","content":"go"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]}`
	post(t, context.Background(), o.URL+"/v1/chat/completions", oFirst)
	_, _, ans := post(t, context.Background(), o.URL+"/v1/chat/completions", oSecond)
	var ou usageDoc
	if err := json.Unmarshal([]byte(ans), &ou); err != nil {
		t.Fatal(err)
	}
	if ou.Usage.Details.Cached*10 < ou.Usage.PromptTokens*8 || ou.Usage.Details.Cached > ou.Usage.PromptTokens {
		t.Errorf("openai second request usage %+v: want most of the prompt cached", ou.Usage)
	}
}

func TestChunks(t *testing.T) {
	tests := []string{"", "short", strings.Repeat("x", 100), strings.Repeat("日本語", 20)}
	for _, s := range tests {
		parts := chunks(s)
		if strings.Join(parts, "") != s {
			t.Errorf("chunks(%q) do not join back", s)
		}
		for _, p := range parts {
			if len(p) == 0 || len(p) > chunkSize || !bytes.Equal([]byte(p), []byte(strings.ToValidUTF8(p, "?"))) {
				t.Errorf("bad chunk %q of %q", p, s)
			}
		}
	}
}
