// Package llmtest is a scripted fake model server for dream's tests. It
// speaks the Anthropic Messages API, OpenAI Chat Completions, the OpenAI
// Responses API (Codex CLI's wire) and Gemini's generateContent (Gemini
// CLI's), plain JSON and streamed (server-sent events in each API's exact
// event sequence), so the real provider adapters, SDKs and agents run end
// to end against it with no network and no API key. A script is a list of turns served in order; when it runs
// out the server answers 500 "llmtest: script exhausted" so that a test that
// makes more calls than it planned fails loudly.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/dreamkit/dream/llm"
)

// Call is one tool call the fake model makes.
type Call struct {
	// ID is the tool call id; empty means one is generated.
	ID string `json:"id,omitempty"`
	// Name is the tool name.
	Name string `json:"name"`
	// Input is marshalled to JSON as the call's arguments. A json.RawMessage
	// is sent verbatim, even when it is not valid JSON (OpenAI carries
	// arguments as a string, so a misbehaving model can send anything); on
	// the Anthropic wire such bytes become a JSON string.
	Input any `json:"input,omitempty"`
}

// Func builds a turn from the request it answers, for tests whose fake model
// must react to what it was sent (for example a malicious model that echoes a
// path it read).
type Func func(req Recorded) Turn

// Turn is one scripted answer.
type Turn struct {
	// Text is the assistant text; empty means no text block.
	Text string
	// Calls are the tool calls, after the text.
	Calls []Call
	// Usage is reported back as is. When zero it is synthesised from the
	// request size, with the cache read equal to the part of the prompt
	// (tools, system, messages, in cache order) unchanged since the previous
	// request, so that cache hit rates come out plausible.
	Usage llm.Usage
	// Status, when non-zero, makes this an error turn: the server answers
	// with this HTTP status and an error body in the protocol's shape.
	Status int
	// RetryAfter is sent verbatim as the Retry-After header of an error turn.
	RetryAfter string
	// Repeat serves this turn N times (0 and 1 mean once); -1 serves it
	// forever.
	Repeat int
	// Delay is waited before answering; the wait ends early when the client
	// goes away or the server closes.
	Delay time.Duration
	// StopReason defaults to tool_use when there are Calls, else end_turn.
	StopReason llm.StopReason
	// Dynamic, when set, is called with the request and its result is served
	// instead of this turn's other fields (Repeat still applies).
	Dynamic Func
}

// Recorded is one request the server received.
type Recorded struct {
	Path   string
	Header http.Header
	Body   []byte
	// Stream is the request's "stream" field; for Gemini, whether the
	// method was streamGenerateContent.
	Stream bool
	// Protocol is one of the Protocol names, or "" for an unknown path.
	Protocol string
}

// Protocol names.
const (
	ProtocolAnthropic = "anthropic"
	ProtocolOpenAI    = "openai"           // Chat Completions
	ProtocolResponses = "openai-responses" // POST .../responses
	ProtocolGemini    = "gemini"           // .../models/{model}:generateContent, :streamGenerateContent
)

// stopReason resolves the default stop reason.
func (t Turn) stopReason() llm.StopReason {
	if t.StopReason != "" {
		return t.StopReason
	}
	if len(t.Calls) > 0 {
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// arguments returns the call's input as bytes for the wire.
func (c Call) arguments() ([]byte, error) {
	switch in := c.Input.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		return in, nil
	default:
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("llmtest: marshal input of call %q: %w", c.Name, err)
		}
		return b, nil
	}
}
