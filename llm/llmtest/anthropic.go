package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/dreamkit/dream/llm"
)

// anthropicProtocol speaks the Anthropic Messages API.
type anthropicProtocol struct{}

func (anthropicProtocol) name() string { return ProtocolAnthropic }

func (anthropicProtocol) canonical(req wireRequest) []byte {
	parts := []json.RawMessage{req.Tools, req.System}
	return canonicalPrompt(append(parts, req.Messages...)...)
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

func anthropicStop(r llm.StopReason) string {
	if r == llm.StopOther {
		return "refusal"
	}
	return string(r)
}

// anthropicInput is the tool input as a JSON value: the arguments when they
// are valid JSON, else those bytes as a JSON string, since the Anthropic wire
// has no place for raw invalid JSON.
func anthropicInput(args []byte) json.RawMessage {
	if json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args))
	return b
}

func (anthropicProtocol) blocks(a answer) ([]anthropicBlock, error) {
	var out []anthropicBlock
	if a.turn.Text != "" {
		text := a.turn.Text
		out = append(out, anthropicBlock{Type: "text", Text: &text})
	}
	for i, c := range a.turn.Calls {
		args, err := c.arguments()
		if err != nil {
			return nil, err
		}
		id := c.ID
		if id == "" {
			id = "toolu_" + a.id + "_" + strconv.Itoa(i)
		}
		out = append(out, anthropicBlock{Type: "tool_use", ID: id, Name: c.Name, Input: anthropicInput(args)})
	}
	return out, nil
}

func (p anthropicProtocol) message(a answer, content []anthropicBlock) anthropicMessage {
	stop := anthropicStop(a.turn.stopReason())
	if content == nil {
		content = []anthropicBlock{}
	}
	return anthropicMessage{
		ID: "msg_" + a.id, Type: "message", Role: "assistant", Model: a.model,
		Content: content, StopReason: &stop,
		Usage: anthropicUsage{
			InputTokens:              a.usage.InputTokens,
			CacheCreationInputTokens: a.usage.CacheCreationInputTokens,
			CacheReadInputTokens:     a.usage.CacheReadInputTokens,
			OutputTokens:             a.usage.OutputTokens,
		},
	}
}

func (p anthropicProtocol) writeJSON(w http.ResponseWriter, a answer) error {
	content, err := p.blocks(a)
	if err != nil {
		return err
	}
	body, err := json.Marshal(p.message(a, content))
	if err != nil {
		return err
	}
	writeJSONBody(w, http.StatusOK, body)
	return nil
}

// Streaming event payloads, as structs so that "type" leads as on the wire.
type (
	anthropicEvent struct {
		Type         string            `json:"type"`
		Message      *anthropicMessage `json:"message,omitempty"`
		Index        *int              `json:"index,omitempty"`
		ContentBlock *anthropicBlock   `json:"content_block,omitempty"`
		Delta        any               `json:"delta,omitempty"`
		Usage        *anthropicOutput  `json:"usage,omitempty"`
	}
	anthropicDelta struct {
		Type        string  `json:"type"`
		Text        *string `json:"text,omitempty"`
		PartialJSON *string `json:"partial_json,omitempty"`
	}
	anthropicStopDelta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
	anthropicOutput struct {
		OutputTokens int64 `json:"output_tokens"`
	}
)

// writeStream sends the Messages streaming sequence: message_start, ping,
// per block content_block_start / *_delta… / content_block_stop,
// message_delta with the stop reason and output usage, message_stop. A write
// error means the client left; there is nobody to report it to.
func (p anthropicProtocol) writeStream(w http.ResponseWriter, a answer) error {
	content, err := p.blocks(a)
	if err != nil {
		return err
	}
	start := p.message(a, nil)
	start.StopReason = nil
	start.Usage.OutputTokens = 1
	events := []anthropicEvent{{Type: "message_start", Message: &start}, {Type: "ping"}}
	for i, b := range content {
		idx := i
		first := b
		var deltas []anthropicDelta
		switch b.Type {
		case "text":
			empty := ""
			first.Text = &empty
			for _, c := range chunks(*b.Text) {
				deltas = append(deltas, anthropicDelta{Type: "text_delta", Text: &c})
			}
		case "tool_use":
			first.Input = json.RawMessage("{}")
			for _, c := range chunks(string(b.Input)) {
				deltas = append(deltas, anthropicDelta{Type: "input_json_delta", PartialJSON: &c})
			}
		}
		events = append(events, anthropicEvent{Type: "content_block_start", Index: &idx, ContentBlock: &first})
		for _, d := range deltas {
			events = append(events, anthropicEvent{Type: "content_block_delta", Index: &idx, Delta: d})
		}
		events = append(events, anthropicEvent{Type: "content_block_stop", Index: &idx})
	}
	final := p.message(a, nil)
	events = append(events,
		anthropicEvent{Type: "message_delta", Delta: anthropicStopDelta{StopReason: *final.StopReason}, Usage: &anthropicOutput{OutputTokens: final.Usage.OutputTokens}},
		anthropicEvent{Type: "message_stop"},
	)
	sse := startSSE(w)
	for _, ev := range events {
		if err := sse.event(ev.Type, ev); err != nil {
			return nil
		}
	}
	return nil
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

func (anthropicProtocol) writeError(w http.ResponseWriter, status int, msg, errType, id string) {
	if errType == "" {
		errType = anthropicErrorType(status)
	}
	body, _ := json.Marshal(struct {
		Type      string `json:"type"`
		Error     any    `json:"error"`
		RequestID string `json:"request_id"`
	}{"error", struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}{errType, msg}, "req_" + id})
	w.Header().Set("Request-Id", "req_"+id)
	writeJSONBody(w, status, body)
}
