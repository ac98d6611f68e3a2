package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// APIError is an HTTP error answer from a model provider. It carries what a
// user needs to fix the problem ("anthropic: 401 invalid x-api-key") and what
// the retry loop needs to decide whether and when to try again.
type APIError struct {
	// Provider is the short provider name ("anthropic", "openai").
	Provider string
	// Status is the HTTP status code, or the status the provider's error type
	// stands for when the error arrived inside a 200 stream.
	Status int
	// Message is the provider's human-readable explanation, or the start of
	// the response body when it had none.
	Message string
	// RetryAfter is the delay the server asked for (Retry-After or
	// retry-after-ms); zero when it did not ask.
	RetryAfter time.Duration
	// Err is the SDK's own error, kept for errors.As by callers that want the
	// request id or the raw body.
	Err error
}

// Error formats as "provider: status message".
func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = statusText(e.Status)
	}
	if e.Status == 0 {
		return fmt.Sprintf("%s: %s", e.Provider, msg)
	}
	return fmt.Sprintf("%s: %d %s", e.Provider, e.Status, msg)
}

// Unwrap returns the SDK error.
func (e *APIError) Unwrap() error { return e.Err }

// Retryable reports whether the status is one a later attempt may not get:
// request timeout, conflict (lock contention on the provider side), rate
// limit, and every server error including Anthropic's 529 "overloaded".
func (e *APIError) Retryable() bool {
	switch {
	case e.Status == 408, e.Status == 409, e.Status == 429:
		return true
	case e.Status >= 500 && e.Status <= 599:
		return true
	}
	return false
}

func statusText(status int) string {
	switch status {
	case 0:
		return "error"
	case 529:
		return "overloaded"
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "error"
}

// ErrAttemptTimeout marks one attempt that ran past its per-request timeout
// while the caller's context was still live. It is retryable: a stalled
// connection says nothing about the next one.
var ErrAttemptTimeout = errors.New("request timed out")

// ErrIncompleteStream marks a streamed answer that ended before the
// protocol's final event, which is what a dropped connection looks like.
var ErrIncompleteStream = errors.New("stream ended before the final event")

// IsRetryable reports whether err is worth another attempt: a retryable
// APIError (429, 5xx, 408, 409), a per-attempt timeout, a stream cut short, or
// a connection-level failure. Cancellation of the caller's context is never
// retryable.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Retryable()
	}
	if errors.Is(err, ErrAttemptTimeout) || errors.Is(err, ErrIncompleteStream) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// The caller's own deadline: there is no time left to retry in.
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		// A host that does not exist will not exist a second later.
		return false
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}
