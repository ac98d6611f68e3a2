package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMessage is the longest error message kept, in runes: enough for any
// real provider message, short enough for one log line.
const maxMessage = 300

// ErrorMessage extracts the human-readable message and the error type from an
// error response body. It understands the Anthropic and OpenAI shapes
// ({"error":{"type":..., "message":...}}), the bare {"error":"..."} of Ollama
// and llama.cpp, and {"message":...} / {"detail":...} of other proxies;
// anything else is taken as text and cut to its first line. The message is
// valid UTF-8, single-line and at most 300 runes.
func ErrorMessage(body []byte) (message, errType string) {
	body = bytes.TrimSpace(body)
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if len(body) > 0 && body[0] == '{' && json.Unmarshal(body, &doc) == nil {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		if len(doc.Error) > 0 && json.Unmarshal(doc.Error, &inner) == nil && (inner.Message != "" || inner.Type != "") {
			return clean(inner.Message), clean(inner.Type)
		}
		for _, raw := range []json.RawMessage{doc.Error, doc.Message, doc.Detail} {
			var s string
			if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != "" {
				return clean(s), ""
			}
		}
	}
	return clean(string(body)), ""
}

// clean makes s safe for one line of a terminal: valid UTF-8, control
// characters removed, the first non-empty line only, bounded length.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for _, line := range strings.Split(s, "\n") {
		line = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, line)
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > maxMessage {
			runes := []rune(line)
			line = string(runes[:maxMessage-1]) + "…"
		}
		return line
	}
	return ""
}

// StatusForErrorType maps an Anthropic error type to the HTTP status it is
// documented with, for errors that arrive as an event inside a 200 stream and
// so carry no status of their own. Unknown types map to 0.
func StatusForErrorType(t string) int {
	switch t {
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "billing_error":
		return 402
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error":
		return 429
	case "api_error":
		return 500
	case "timeout_error":
		return 504
	case "overloaded_error":
		return 529
	}
	return 0
}
