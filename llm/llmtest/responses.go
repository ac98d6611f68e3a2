package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/dreamkit/dream/llm"
)

// responsesProtocol speaks the OpenAI Responses API (POST .../responses),
// the wire Codex CLI uses for a model provider with wire_api = "responses".
// Codex always streams and reads the typed event sequence: it takes each
// finished item from response.output_item.done and ends the turn only on
// response.completed, so the stream sends every event a real one does.
type responsesProtocol struct{}

func (responsesProtocol) name() string { return ProtocolResponses }

// canonical is the prompt in the order the Responses cache reads it:
// tools, instructions, then the input items.
func (responsesProtocol) canonical(req wireRequest) []byte {
	return canonicalPrompt(req.Tools, req.Instructions, req.Input)
}

// responsesPart is one content part of an output message.
type responsesPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// responsesMessage is an assistant message output item.
type responsesMessage struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Status  string          `json:"status"`
	Role    string          `json:"role"`
	Content []responsesPart `json:"content"`
}

// responsesCall is a function_call output item.
type responsesCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responsesUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

// responsesUsageOf reports usage the Responses way: input_tokens is the
// whole input, cached_tokens the part of it read from cache.
func responsesUsageOf(u llm.Usage) responsesUsage {
	var r responsesUsage
	r.InputTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	r.InputTokensDetails.CachedTokens = u.CacheReadInputTokens
	r.OutputTokens = u.OutputTokens
	r.TotalTokens = r.InputTokens + r.OutputTokens
	return r
}

// responsesObject is the response resource, as the JSON answer and inside
// the response.* lifecycle events.
type responsesObject struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	CreatedAt         int64           `json:"created_at"`
	Status            string          `json:"status"`
	Error             any             `json:"error"`
	IncompleteDetails *responsesWhy   `json:"incomplete_details"`
	Model             string          `json:"model"`
	Output            []any           `json:"output"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	ToolChoice        string          `json:"tool_choice"`
	Tools             []any           `json:"tools"`
	Usage             *responsesUsage `json:"usage"`
}

type responsesWhy struct {
	Reason string `json:"reason"`
}

// responsesStatus is the final status and, when the turn did not end
// normally, why: a max_tokens stop is incomplete for max_output_tokens, a
// refusal incomplete for content_filter.
func responsesStatus(r llm.StopReason) (string, *responsesWhy) {
	switch r {
	case llm.StopMaxTokens:
		return "incomplete", &responsesWhy{Reason: "max_output_tokens"}
	case llm.StopOther:
		return "incomplete", &responsesWhy{Reason: "content_filter"}
	}
	return "completed", nil
}

// items builds the finished output items: the message (when there is
// text), then one function_call per call.
func (responsesProtocol) items(a answer) (msg *responsesMessage, calls []responsesCall, err error) {
	if a.turn.Text != "" {
		msg = &responsesMessage{ID: "msg_" + a.id, Type: "message", Status: "completed", Role: "assistant",
			Content: []responsesPart{{Type: "output_text", Text: a.turn.Text, Annotations: []any{}}}}
	}
	for i, c := range a.turn.Calls {
		args, err := c.arguments()
		if err != nil {
			return nil, nil, err
		}
		id := c.ID
		if id == "" {
			id = "call_" + a.id + "_" + strconv.Itoa(i)
		}
		calls = append(calls, responsesCall{ID: "fc_" + a.id + "_" + strconv.Itoa(i), Type: "function_call", Status: "completed",
			CallID: id, Name: c.Name, Arguments: string(args)})
	}
	return msg, calls, nil
}

func (p responsesProtocol) object(a answer, created int64, output []any) responsesObject {
	status, why := responsesStatus(a.turn.stopReason())
	u := responsesUsageOf(a.usage)
	if output == nil {
		output = []any{}
	}
	return responsesObject{ID: "resp_" + a.id, Object: "response", CreatedAt: created, Status: status,
		IncompleteDetails: why, Model: a.model, Output: output, ParallelToolCalls: true, ToolChoice: "auto",
		Tools: []any{}, Usage: &u}
}

func (p responsesProtocol) writeJSON(w http.ResponseWriter, a answer) error {
	msg, calls, err := p.items(a)
	if err != nil {
		return err
	}
	var output []any
	if msg != nil {
		output = append(output, msg)
	}
	for _, c := range calls {
		output = append(output, c)
	}
	body, err := json.Marshal(p.object(a, time.Now().Unix(), output))
	if err != nil {
		return err
	}
	writeJSONBody(w, http.StatusOK, body)
	return nil
}

// responsesEvent is one streaming event; "type" and "sequence_number"
// lead, as on the wire.
type responsesEvent struct {
	Type           string           `json:"type"`
	SequenceNumber int              `json:"sequence_number"`
	Response       *responsesObject `json:"response,omitempty"`
	OutputIndex    *int             `json:"output_index,omitempty"`
	ItemID         string           `json:"item_id,omitempty"`
	ContentIndex   *int             `json:"content_index,omitempty"`
	Item           any              `json:"item,omitempty"`
	Part           *responsesPart   `json:"part,omitempty"`
	Delta          *string          `json:"delta,omitempty"`
	Text           *string          `json:"text,omitempty"`
	Arguments      *string          `json:"arguments,omitempty"`
}

// writeStream sends the Responses event sequence: response.created and
// response.in_progress; for the message output_item.added,
// content_part.added, output_text.delta…, output_text.done,
// content_part.done, output_item.done; for each call output_item.added,
// function_call_arguments.delta…, function_call_arguments.done,
// output_item.done; then response.completed (or response.incomplete) with
// the whole response and its usage. A write error means the client left.
func (p responsesProtocol) writeStream(w http.ResponseWriter, a answer) error {
	msg, calls, err := p.items(a)
	if err != nil {
		return err
	}
	created := time.Now().Unix()
	start := p.object(a, created, nil)
	start.Status, start.IncompleteDetails, start.Usage = "in_progress", nil, nil
	events := []responsesEvent{{Type: "response.created", Response: &start}, {Type: "response.in_progress", Response: &start}}
	var output []any
	zero := 0
	if msg != nil {
		idx := len(output)
		text := msg.Content[0].Text
		open := *msg
		open.Status, open.Content = "in_progress", []responsesPart{}
		empty := responsesPart{Type: "output_text", Text: "", Annotations: []any{}}
		events = append(events,
			responsesEvent{Type: "response.output_item.added", OutputIndex: &idx, Item: open},
			responsesEvent{Type: "response.content_part.added", ItemID: msg.ID, OutputIndex: &idx, ContentIndex: &zero, Part: &empty})
		for _, c := range chunks(text) {
			events = append(events, responsesEvent{Type: "response.output_text.delta", ItemID: msg.ID, OutputIndex: &idx, ContentIndex: &zero, Delta: &c})
		}
		events = append(events,
			responsesEvent{Type: "response.output_text.done", ItemID: msg.ID, OutputIndex: &idx, ContentIndex: &zero, Text: &text},
			responsesEvent{Type: "response.content_part.done", ItemID: msg.ID, OutputIndex: &idx, ContentIndex: &zero, Part: &msg.Content[0]},
			responsesEvent{Type: "response.output_item.done", OutputIndex: &idx, Item: *msg})
		output = append(output, *msg)
	}
	for _, c := range calls {
		idx := len(output)
		open := c
		open.Status, open.Arguments = "in_progress", ""
		events = append(events, responsesEvent{Type: "response.output_item.added", OutputIndex: &idx, Item: open})
		for _, d := range chunks(c.Arguments) {
			events = append(events, responsesEvent{Type: "response.function_call_arguments.delta", ItemID: c.ID, OutputIndex: &idx, Delta: &d})
		}
		args := c.Arguments
		events = append(events,
			responsesEvent{Type: "response.function_call_arguments.done", ItemID: c.ID, OutputIndex: &idx, Arguments: &args},
			responsesEvent{Type: "response.output_item.done", OutputIndex: &idx, Item: c})
		output = append(output, c)
	}
	final := p.object(a, created, output)
	last := "response.completed"
	if final.Status == "incomplete" {
		last = "response.incomplete"
	}
	events = append(events, responsesEvent{Type: last, Response: &final})
	sse := startSSE(w)
	for i := range events {
		events[i].SequenceNumber = i
		if err := sse.event(events[i].Type, events[i]); err != nil {
			return nil
		}
	}
	return nil
}

// writeError answers in the OpenAI error shape, which the Responses API
// shares with Chat Completions.
func (responsesProtocol) writeError(w http.ResponseWriter, status int, msg, errType, id string) {
	openaiProtocol{}.writeError(w, status, msg, errType, id)
}
