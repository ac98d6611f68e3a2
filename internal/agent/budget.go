package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/dreamkit/dream/llm"
)

// bytesPerToken is the conservative size of one token used to estimate a
// request before it is sent. English and JSON run nearer four bytes a token;
// three also covers CJK text (three UTF-8 bytes a character, about a token
// each), so the estimate errs towards stopping early, never towards a
// request that overruns the budget.
const bytesPerToken = 3

// History limits: how large a string field of a tool call may stay in the
// conversation once the call has been answered. A refused or failed call's
// input is dead weight the model does not need back (the error says what
// was wrong); a successful one is on disk, where read can show it.
const (
	keepRefusedField   = 256
	keepSucceededField = 8 << 10
)

// estimateTokens is a byte-count estimate of what messages cost as input.
func estimateTokens(msgs []llm.Message) int64 {
	var n int
	for _, m := range msgs {
		n += len(m.Role) + 8
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Input) + len(b.ID) + len(b.Name) + 16
		}
	}
	return int64((n + bytesPerToken - 1) / bytesPerToken)
}

// estimateFixed is the estimate of the parts every request repeats: the
// system prompt and the tool definitions.
func estimateFixed(system string, tools []llm.Tool) int64 {
	n := len(system)
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema) + 16
	}
	return int64((n + bytesPerToken - 1) / bytesPerToken)
}

// compactInput returns the tool call input to keep in the history: input
// itself when every string field is at most keep bytes, else a copy with
// each longer string replaced by a note of its size. The result is always a
// JSON object, as providers require of a tool_use input; input that is not
// one (a model can send anything) is replaced by an object saying so.
func compactInput(input json.RawMessage, keep int, why string) json.RawMessage {
	if len(input) <= keep {
		return input
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil || fields == nil {
		out, _ := json.Marshal(map[string]string{"omitted": fmt.Sprintf("%d bytes of input that is not a JSON object, dropped from the history by dream (%s)", len(input), why)})
		return out
	}
	changed := false
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := fields[k]
		if len(v) <= keep {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			// A huge array or object: not a field any tool takes.
			s = string(v)
		}
		note, _ := json.Marshal(fmt.Sprintf("[%d bytes omitted from the history by dream: %s]", len(s), why))
		fields[k] = note
		changed = true
	}
	if !changed {
		return input
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return input
	}
	return out
}
