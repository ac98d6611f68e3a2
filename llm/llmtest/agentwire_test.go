package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/llmtest"
)

// The agents' wires (the Responses API Codex CLI speaks, Gemini's
// generateContent) are checked here from the client's side: the Responses
// API through the official openai-go SDK, Gemini (no Go client in the
// module graph) through its documented JSON over plain HTTP. Gemini CLI
// and Codex CLI themselves drive them in the conformance suite.

const marker = "MEMORY-MARKER-7f3a"

func responsesClient(srv *llmtest.Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

func responsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        "codex-test",
		Instructions: openai.String("You are a coding agent. " + marker),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Read the index.", responses.EasyInputMessageRoleUser),
		}},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name:       "read",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"file_path": map[string]any{"type": "string"}}},
		}}},
	}
}

var responsesTurn = llmtest.Turn{
	Text:  "Reading the index first.",
	Calls: []llmtest.Call{{ID: "call_fixed", Name: "read", Input: map[string]any{"file_path": "MEMORY.md"}}},
	Usage: llm.Usage{InputTokens: 40, CacheReadInputTokens: 60, OutputTokens: 12},
}

// checkResponse is what both modes must give: the text, the call with its
// arguments, the usage the Responses way (input includes the cached part).
func checkResponse(t *testing.T, r *responses.Response) {
	t.Helper()
	if got := r.OutputText(); got != responsesTurn.Text {
		t.Errorf("output text %q, want %q", got, responsesTurn.Text)
	}
	var call responses.ResponseFunctionToolCall
	for _, item := range r.Output {
		if item.Type == "function_call" {
			call = item.AsFunctionCall()
		}
	}
	if call.CallID != "call_fixed" || call.Name != "read" || call.Arguments != `{"file_path":"MEMORY.md"}` {
		t.Errorf("function call %+v", call)
	}
	u := r.Usage
	if u.InputTokens != 100 || u.InputTokensDetails.CachedTokens != 60 || u.OutputTokens != 12 || u.TotalTokens != 112 {
		t.Errorf("usage %+v", u)
	}
	if r.Status != responses.ResponseStatusCompleted {
		t.Errorf("status %q", r.Status)
	}
}

func checkRecordedResponses(t *testing.T, srv *llmtest.Server, stream bool) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if r.Protocol != llmtest.ProtocolResponses || r.Path != "/v1/responses" || r.Stream != stream {
		t.Errorf("recorded %s %s stream=%v", r.Protocol, r.Path, r.Stream)
	}
	if !strings.Contains(string(r.Body), marker) {
		t.Errorf("the request body does not carry the instructions' marker: %s", r.Body)
	}
}

func TestResponsesSDK(t *testing.T) {
	srv := llmtest.NewServer(responsesTurn)
	defer srv.Close()
	client := responsesClient(srv)
	r, err := client.Responses.New(context.Background(), responsesParams())
	if err != nil {
		t.Fatalf("Responses.New: %v", err)
	}
	checkResponse(t, r)
	checkRecordedResponses(t, srv, false)
}

func TestResponsesSDKStream(t *testing.T) {
	srv := llmtest.NewServer(responsesTurn)
	defer srv.Close()
	client := responsesClient(srv)
	stream := client.Responses.NewStreaming(context.Background(), responsesParams())
	var text strings.Builder
	var args string
	var final *responses.Response
	var seq []int64
	for stream.Next() {
		ev := stream.Current()
		seq = append(seq, ev.SequenceNumber)
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.function_call_arguments.done":
			args = ev.Arguments
		case "response.completed":
			r := ev.Response
			final = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if text.String() != responsesTurn.Text || args != `{"file_path":"MEMORY.md"}` {
		t.Errorf("streamed text %q, arguments %q", text.String(), args)
	}
	for i, s := range seq {
		if s != int64(i) {
			t.Fatalf("sequence numbers %v are not 0, 1, 2...", seq)
		}
	}
	if final == nil {
		t.Fatal("no response.completed event")
	}
	checkResponse(t, final)
	checkRecordedResponses(t, srv, true)
}

// TestResponsesIncomplete: a max_tokens stop is an incomplete response,
// the way the API ends one that ran out of output tokens.
func TestResponsesIncomplete(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Text: "cut", StopReason: llm.StopMaxTokens})
	defer srv.Close()
	client := responsesClient(srv)
	stream := client.Responses.NewStreaming(context.Background(), responsesParams())
	var last responses.ResponseStreamEventUnion
	for stream.Next() {
		last = stream.Current()
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if last.Type != "response.incomplete" || last.Response.Status != responses.ResponseStatusIncomplete || last.Response.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("last event %s, response status %q, reason %q", last.Type, last.Response.Status, last.Response.IncompleteDetails.Reason)
	}
}

func TestResponsesError(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Status: 429, RetryAfter: "3"})
	defer srv.Close()
	client := responsesClient(srv)
	_, err := client.Responses.New(context.Background(), responsesParams())
	var apiErr *openai.Error
	if !asOpenAIError(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Type != "rate_limit_exceeded" {
		t.Fatalf("error %v, want a 429 rate_limit_exceeded *openai.Error", err)
	}
}

func asOpenAIError(err error, target **openai.Error) bool {
	e, ok := err.(*openai.Error)
	if ok {
		*target = e
	}
	return ok
}

// geminiRequest is a request as Gemini CLI sends it: the model in the path,
// contents and a system instruction in the body.
const geminiRequest = `{"contents":[{"role":"user","parts":[{"text":"Read the index."}]}],` +
	`"systemInstruction":{"parts":[{"text":"You are Gemini CLI. ` + marker + `"}]},` +
	`"tools":[{"functionDeclarations":[{"name":"read_file","parameters":{"type":"object"}}]}]}`

// geminiAnswer is the part of a GenerateContentResponse the test reads.
type geminiAnswer struct {
	Candidates []struct {
		Content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         string `json:"text"`
				FunctionCall *struct {
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		TotalTokenCount         int64 `json:"totalTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	} `json:"usageMetadata"`
}

var geminiTurn = llmtest.Turn{
	Text:  "Reading the index first, then the notes it points at.",
	Calls: []llmtest.Call{{Name: "read_file", Input: map[string]any{"file_path": "MEMORY.md"}}},
	Usage: llm.Usage{InputTokens: 40, CacheReadInputTokens: 60, OutputTokens: 12},
}

// merge folds a stream of responses (or one) into the text, the calls,
// the last finish reason and the last usage, as Gemini CLI does.
func merge(t *testing.T, answers []geminiAnswer) (text string, calls []string, finish string, usage [4]int64) {
	t.Helper()
	var b strings.Builder
	for _, a := range answers {
		if len(a.Candidates) != 1 {
			t.Fatalf("%d candidates", len(a.Candidates))
		}
		c := a.Candidates[0]
		if c.Content.Role != "model" {
			t.Errorf("role %q", c.Content.Role)
		}
		for _, p := range c.Content.Parts {
			b.WriteString(p.Text)
			if p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall.Name+string(p.FunctionCall.Args))
			}
		}
		if c.FinishReason != "" {
			finish = c.FinishReason
		}
		if u := a.UsageMetadata; u != nil {
			usage = [4]int64{u.PromptTokenCount, u.CandidatesTokenCount, u.TotalTokenCount, u.CachedContentTokenCount}
		}
	}
	return b.String(), calls, finish, usage
}

func postGemini(t *testing.T, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(geminiRequest))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", "dummy")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGemini(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "generateContent", true: "streamGenerateContent"}[stream]
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(geminiTurn)
			defer srv.Close()
			url := srv.URL + "/v1beta/models/gemini-test:" + name
			if stream {
				url += "?alt=sse"
			}
			res := postGemini(t, url)
			defer res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			var answers []geminiAnswer
			if stream {
				if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
					t.Errorf("content type %q", ct)
				}
				sc := bufio.NewScanner(res.Body)
				for sc.Scan() {
					data, ok := strings.CutPrefix(sc.Text(), "data: ")
					if !ok {
						continue
					}
					var a geminiAnswer
					if err := json.Unmarshal([]byte(data), &a); err != nil {
						t.Fatalf("event %q: %v", data, err)
					}
					answers = append(answers, a)
				}
				if len(answers) < 3 {
					t.Errorf("a streamed answer came in %d events, want it in pieces", len(answers))
				}
			} else {
				var a geminiAnswer
				if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
					t.Fatal(err)
				}
				answers = append(answers, a)
			}
			text, calls, finish, usage := merge(t, answers)
			if text != geminiTurn.Text || len(calls) != 1 || calls[0] != `read_file{"file_path":"MEMORY.md"}` || finish != "STOP" {
				t.Errorf("text %q, calls %q, finish %q", text, calls, finish)
			}
			if usage != [4]int64{100, 12, 112, 60} {
				t.Errorf("usage (prompt, candidates, total, cached) = %v", usage)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Protocol != llmtest.ProtocolGemini || reqs[0].Stream != stream || !strings.Contains(string(reqs[0].Body), marker) {
				t.Errorf("recorded %+v", reqs)
			}
		})
	}
}

func TestGeminiErrorAndPaths(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Status: 429})
	defer srv.Close()
	res := postGemini(t, srv.URL+"/v1beta/models/gemini-test:generateContent")
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	err := json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if err != nil || res.StatusCode != 429 || body.Error.Code != 429 || body.Error.Status != "RESOURCE_EXHAUSTED" {
		t.Errorf("error answer %d %+v (%v)", res.StatusCode, body, err)
	}
	// Other methods of the models collection are not served.
	for _, path := range []string{"/v1beta/models/gemini-test:countTokens", "/v1beta/models/:generateContent", "/v1beta/models/a/b:generateContent"} {
		res := postGemini(t, srv.URL+path)
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("%s answered %d, want 404", path, res.StatusCode)
		}
	}
}
