package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

func TestAPIErrorError(t *testing.T) {
	tests := []struct {
		err  *APIError
		want string
	}{
		{&APIError{Provider: "anthropic", Status: 401, Message: "invalid x-api-key"}, "anthropic: 401 invalid x-api-key"},
		{&APIError{Provider: "openai", Status: 503}, "openai: 503 Service Unavailable"},
		{&APIError{Provider: "anthropic", Status: 529}, "anthropic: 529 overloaded"},
		{&APIError{Provider: "anthropic", Message: "stream error: overloaded"}, "anthropic: stream error: overloaded"},
		{&APIError{Provider: "x", Status: 599}, "x: 599 error"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestIsRetryable(t *testing.T) {
	cause := errors.New("sdk error")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"429", &APIError{Status: 429}, true},
		{"wrapped 500", fmt.Errorf("turn 3: %w", &APIError{Status: 500, Err: cause}), true},
		{"529", &APIError{Status: 529}, true},
		{"408", &APIError{Status: 408}, true},
		{"400", &APIError{Status: 400}, false},
		{"401", &APIError{Status: 401}, false},
		{"404", &APIError{Status: 404}, false},
		{"unknown status from stream", &APIError{Status: 0}, false},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), false},
		{"caller deadline", context.DeadlineExceeded, false},
		{"attempt timeout", fmt.Errorf("%w: %w", ErrAttemptTimeout, context.DeadlineExceeded), true},
		{"incomplete stream", ErrIncompleteStream, true},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"conn reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"conn refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"dns temporary", &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}, true},
		{"dns not found", &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, false},
		{"plain", errors.New("bad request shape"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetryable(tt.err); got != tt.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	wrapped := &APIError{Provider: "p", Status: 500, Err: cause}
	if !errors.Is(wrapped, cause) {
		t.Error("APIError does not unwrap to its SDK error")
	}
}
