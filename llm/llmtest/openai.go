package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/dreamkit/dream/llm"
)

// openaiProtocol speaks OpenAI Chat Completions, as OpenAI and the
// compatible local servers do.
type openaiProtocol struct{}

func (openaiProtocol) name() string { return ProtocolOpenAI }

func (openaiProtocol) canonical(req wireRequest) []byte {
	return canonicalPrompt(append([]json.RawMessage{req.Tools}, req.Messages...)...)
}

type openaiToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// openaiUsageOf reports usage the OpenAI way: prompt_tokens is the whole
// input, cached_tokens the part of it read from cache.
func openaiUsageOf(u llm.Usage) openaiUsage {
	var o openaiUsage
	o.PromptTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	o.CompletionTokens = u.OutputTokens
	o.TotalTokens = o.PromptTokens + o.CompletionTokens
	o.PromptTokensDetails.CachedTokens = u.CacheReadInputTokens
	return o
}

func openaiFinish(r llm.StopReason) string {
	switch r {
	case llm.StopEndTurn:
		return "stop"
	case llm.StopToolUse:
		return "tool_calls"
	case llm.StopMaxTokens:
		return "length"
	case llm.StopOther:
		return "content_filter"
	}
	return string(r)
}

func (openaiProtocol) calls(a answer) ([]openaiToolCall, error) {
	var out []openaiToolCall
	for i, c := range a.turn.Calls {
		args, err := c.arguments()
		if err != nil {
			return nil, err
		}
		tc := openaiToolCall{ID: c.ID, Type: "function"}
		if tc.ID == "" {
			tc.ID = "call_" + a.id + "_" + strconv.Itoa(i)
		}
		tc.Function.Name = c.Name
		tc.Function.Arguments = string(args)
		out = append(out, tc)
	}
	return out, nil
}

func (p openaiProtocol) writeJSON(w http.ResponseWriter, a answer) error {
	calls, err := p.calls(a)
	if err != nil {
		return err
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if a.turn.Text != "" {
		msg["content"] = a.turn.Text
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	body, err := json.Marshal(map[string]any{
		"id": "chatcmpl-" + a.id, "object": "chat.completion", "created": time.Now().Unix(), "model": a.model,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "logprobs": nil, "finish_reason": openaiFinish(a.turn.stopReason()),
		}},
		"usage": openaiUsageOf(a.usage),
	})
	if err != nil {
		return err
	}
	writeJSONBody(w, http.StatusOK, body)
	return nil
}

// openaiChunk is one chat.completion.chunk, fields in wire order.
type openaiChunk struct {
	ID      string              `json:"id"`
	Object  string              `json:"object"`
	Created int64               `json:"created"`
	Model   string              `json:"model"`
	Choices []openaiChunkChoice `json:"choices"`
	Usage   *openaiUsage        `json:"usage"`
}

type openaiChunkChoice struct {
	Index        int         `json:"index"`
	Delta        openaiDelta `json:"delta"`
	Logprobs     any         `json:"logprobs"`
	FinishReason *string     `json:"finish_reason"`
}

type openaiDelta struct {
	Role      string           `json:"role,omitempty"`
	Content   *string          `json:"content,omitempty"`
	ToolCalls []openaiToolCall `json:"tool_calls,omitempty"`
}

// writeStream sends chat.completion.chunk events: the role, content deltas,
// per tool call a first delta with id and name then argument deltas, a chunk
// with the finish reason, the usage chunk (empty choices) when the request
// asked for stream_options.include_usage, and data: [DONE]. A write error
// means the client left; there is nobody to report it to.
func (p openaiProtocol) writeStream(w http.ResponseWriter, a answer) error {
	calls, err := p.calls(a)
	if err != nil {
		return err
	}
	created := time.Now().Unix()
	chunk := func(d openaiDelta, finish *string) openaiChunk {
		return openaiChunk{
			ID: "chatcmpl-" + a.id, Object: "chat.completion.chunk", Created: created, Model: a.model,
			Choices: []openaiChunkChoice{{Delta: d, FinishReason: finish}},
		}
	}
	empty := ""
	out := []openaiChunk{chunk(openaiDelta{Role: "assistant", Content: &empty}, nil)}
	for _, c := range chunks(a.turn.Text) {
		out = append(out, chunk(openaiDelta{Content: &c}, nil))
	}
	for i, tc := range calls {
		idx := i
		head := openaiToolCall{Index: &idx, ID: tc.ID, Type: "function"}
		head.Function.Name = tc.Function.Name
		out = append(out, chunk(openaiDelta{ToolCalls: []openaiToolCall{head}}, nil))
		for _, c := range chunks(tc.Function.Arguments) {
			part := openaiToolCall{Index: &idx}
			part.Function.Arguments = c
			out = append(out, chunk(openaiDelta{ToolCalls: []openaiToolCall{part}}, nil))
		}
	}
	finish := openaiFinish(a.turn.stopReason())
	out = append(out, chunk(openaiDelta{}, &finish))
	if a.includeUsage {
		u := openaiUsageOf(a.usage)
		last := chunk(openaiDelta{}, nil)
		last.Choices, last.Usage = []openaiChunkChoice{}, &u
		out = append(out, last)
	}
	sse := startSSE(w)
	for _, c := range out {
		if err := sse.event("", c); err != nil {
			return nil
		}
	}
	_ = sse.event("", "[DONE]")
	return nil
}

type openaiErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func openaiErrorType(status int) string {
	switch {
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status == 429:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func (openaiProtocol) writeError(w http.ResponseWriter, status int, msg, errType, id string) {
	if errType == "" {
		errType = openaiErrorType(status)
	}
	body, _ := json.Marshal(struct {
		Error openaiErrorBody `json:"error"`
	}{openaiErrorBody{Message: msg, Type: errType}})
	w.Header().Set("X-Request-Id", "req_"+id)
	writeJSONBody(w, status, body)
}
