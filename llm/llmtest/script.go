package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dreamkit/dream/llm"
)

// scriptFile is the JSON form of a script, for the llmfake command and for
// scripts under bench/: either {"turns": [...]} or a bare array of turns.
type scriptFile struct {
	Turns []scriptTurn `json:"turns"`
}

type scriptTurn struct {
	Text       string         `json:"text"`
	Calls      []scriptCall   `json:"calls"`
	Usage      *llm.Usage     `json:"usage"`
	Status     int            `json:"status"`
	RetryAfter string         `json:"retry_after"`
	Repeat     int            `json:"repeat"`
	Delay      string         `json:"delay"`
	StopReason llm.StopReason `json:"stop_reason"`
}

type scriptCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ParseScript reads a script from JSON. Unknown fields are errors, so that a
// misspelt "stauts" does not silently turn an error turn into a text turn.
// Delays are Go durations ("1.5s"); a call's input must be a JSON object.
func ParseScript(data []byte) ([]Turn, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("llmtest: empty script")
	}
	var raw []scriptTurn
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if trimmed[0] == '[' {
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("llmtest: parse script: %w", err)
		}
	} else {
		var f scriptFile
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("llmtest: parse script: %w", err)
		}
		raw = f.Turns
	}
	if dec.More() {
		return nil, fmt.Errorf("llmtest: parse script: trailing data after the script")
	}
	turns := make([]Turn, 0, len(raw))
	for i, r := range raw {
		t, err := r.turn()
		if err != nil {
			return nil, fmt.Errorf("llmtest: script turn %d: %w", i+1, err)
		}
		turns = append(turns, t)
	}
	return turns, nil
}

func (r scriptTurn) turn() (Turn, error) {
	t := Turn{Text: r.Text, Status: r.Status, RetryAfter: r.RetryAfter, Repeat: r.Repeat, StopReason: r.StopReason}
	if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
		return Turn{}, fmt.Errorf("status %d is not an HTTP error status (400-599)", r.Status)
	}
	if r.Repeat < -1 {
		return Turn{}, fmt.Errorf("repeat %d: want -1 (forever) or a count >= 0", r.Repeat)
	}
	switch r.StopReason {
	case "", llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopOther:
	default:
		return Turn{}, fmt.Errorf("stop_reason %q: want end_turn, tool_use, max_tokens or other", r.StopReason)
	}
	if r.Delay != "" {
		d, err := time.ParseDuration(r.Delay)
		if err != nil {
			return Turn{}, fmt.Errorf("delay: %w", err)
		}
		if d < 0 {
			return Turn{}, fmt.Errorf("delay %s is negative", d)
		}
		t.Delay = d
	}
	if r.Usage != nil {
		u := *r.Usage
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadInputTokens < 0 || u.CacheCreationInputTokens < 0 {
			return Turn{}, fmt.Errorf("usage counts must not be negative")
		}
		t.Usage = u
	}
	for j, c := range r.Calls {
		if c.Name == "" {
			return Turn{}, fmt.Errorf("call %d has no name", j+1)
		}
		in := bytes.TrimSpace(c.Input)
		if len(in) == 0 || string(in) == "null" {
			in = []byte("{}")
		}
		if in[0] != '{' {
			return Turn{}, fmt.Errorf("call %d (%s): input must be a JSON object", j+1, c.Name)
		}
		t.Calls = append(t.Calls, Call{ID: c.ID, Name: c.Name, Input: json.RawMessage(in)})
	}
	return t, nil
}
