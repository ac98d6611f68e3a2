package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// chunkSize is the largest delta the server streams, small enough that every
// non-trivial text and argument arrives in several pieces and the clients'
// accumulation is exercised.
const chunkSize = 24

// sseWriter writes server-sent events, flushing each so that clients see
// them as a real API would send them.
type sseWriter struct {
	w   http.ResponseWriter
	buf bytes.Buffer
}

func startSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w}
}

// event writes one event; name is omitted when empty (OpenAI sends data
// lines only). A write error means the client went away; the caller stops.
func (s *sseWriter) event(name string, data any) error {
	s.buf.Reset()
	if name != "" {
		fmt.Fprintf(&s.buf, "event: %s\n", name)
	}
	s.buf.WriteString("data: ")
	switch d := data.(type) {
	case string:
		s.buf.WriteString(d)
	default:
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("llmtest: marshal %s event: %w", name, err)
		}
		s.buf.Write(b)
	}
	s.buf.WriteString("\n\n")
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// chunks splits s into pieces of at most chunkSize bytes without cutting a
// UTF-8 sequence; an empty s gives no pieces.
func chunks(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(chunkSize, len(s))
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			n = min(chunkSize, len(s))
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func writeJSONBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
