package wire

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantMsg  string
		wantType string
	}{
		{"anthropic", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "invalid x-api-key", "authentication_error"},
		{"openai", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "Incorrect API key provided", "invalid_request_error"},
		{"ollama", `{"error":"model \"llama9\" not found, try pulling it first"}`, `model "llama9" not found, try pulling it first`, ""},
		{"message field", `{"message":"Unauthorized"}`, "Unauthorized", ""},
		{"fastapi detail", `{"detail":"Not Found"}`, "Not Found", ""},
		{"type only", `{"error":{"type":"overloaded_error"}}`, "", "overloaded_error"},
		{"plain text", "upstream connect error\nreset reason: overflow\n", "upstream connect error", ""},
		{"leading blank lines", "\n\n  Bad Gateway  \n", "Bad Gateway", ""},
		{"html", "<html><body>502 Bad Gateway</body></html>", "<html><body>502 Bad Gateway</body></html>", ""},
		{"empty", "", "", ""},
		{"control chars", "bad\x1b[31m red\tthing", "bad [31m red thing", ""},
		{"invalid utf8", "caf\xe9", "caf\uFFFD", ""},
		{"json detail object", `{"detail":{"loc":["body"]}}`, `{"detail":{"loc":["body"]}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, typ := ErrorMessage([]byte(tt.body))
			if msg != tt.wantMsg || typ != tt.wantType {
				t.Errorf("ErrorMessage(%q) = %q, %q; want %q, %q", tt.body, msg, typ, tt.wantMsg, tt.wantType)
			}
		})
	}
}

func TestErrorMessageTruncates(t *testing.T) {
	msg, _ := ErrorMessage([]byte(strings.Repeat("é", 1000)))
	if n := utf8.RuneCountInString(msg); n != maxMessage {
		t.Errorf("message has %d runes, want %d", n, maxMessage)
	}
	if !strings.HasSuffix(msg, "…") {
		t.Errorf("truncated message does not end with an ellipsis: %q", msg[len(msg)-8:])
	}
}

func FuzzErrorMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
		`{"error":"x"}`, `{"message":1}`, "plain\ntext", "", "\xff\xfe", `{"error":{"message":"a\nb"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, typ := ErrorMessage(body)
		for _, s := range []string{msg, typ} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 in %q", s)
			}
			if strings.ContainsAny(s, "\n\r\x00\x1b") {
				t.Fatalf("control character in %q", s)
			}
			if utf8.RuneCountInString(s) > maxMessage {
				t.Fatalf("%d runes, more than %d", utf8.RuneCountInString(s), maxMessage)
			}
		}
	})
}

func TestStatusForErrorType(t *testing.T) {
	tests := map[string]int{"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500, "authentication_error": 401, "nonsense": 0}
	for typ, want := range tests {
		if got := StatusForErrorType(typ); got != want {
			t.Errorf("StatusForErrorType(%q) = %d, want %d", typ, got, want)
		}
	}
}
