// Package wire holds what the provider adapters share below the SDKs: a
// middleware that keeps the status, headers and body of an error response,
// and the parsing that turns those into an *llm.APIError. The SDKs' own error
// types are built only from JSON bodies of their own shape; local servers
// (Ollama, vLLM, llama.cpp, proxies) answer errors in plain text or HTML, and
// the status and Retry-After must survive that.
package wire

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/dreamkit/dream/llm"
)

// maxErrorBody bounds how much of an error body is kept; the message the
// user sees is cut much shorter, this only keeps a hostile server from
// filling memory.
const maxErrorBody = 64 << 10

// Capture records the last error response seen by one attempt. Create one per
// attempt and pass Middleware to the SDK call.
type Capture struct {
	mu     sync.Mutex
	status int
	header http.Header
	body   []byte
}

// Middleware has the signature of both SDKs' option.Middleware. On a status
// of 400 or more it reads the body (bounded), keeps a copy and hands the SDK
// an identical body so that its own error decoding still works.
func (c *Capture) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil || res.StatusCode < 400 {
		return res, err
	}
	var body []byte
	if res.Body != nil {
		body, err = io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		if err != nil {
			// The status alone is still worth reporting.
			body = nil
		}
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	c.status, c.header, c.body = res.StatusCode, res.Header.Clone(), body
	c.mu.Unlock()
	return res, nil
}

// APIError returns the recorded error response as an *llm.APIError wrapping
// cause, or nil when no error response was recorded.
func (c *Capture) APIError(provider string, cause error, now time.Time) *llm.APIError {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status == 0 {
		return nil
	}
	msg, _ := ErrorMessage(c.body)
	e := &llm.APIError{Provider: provider, Status: c.status, Message: msg, Err: cause}
	if d, ok := llm.ParseRetryAfter(c.header, now); ok {
		e.RetryAfter = d
	}
	return e
}

// Wrap turns any error from an SDK call into the error Complete returns: an
// *llm.APIError when the server answered with an error status, otherwise the
// error prefixed with the provider name.
func Wrap(provider string, c *Capture, err error) error {
	if err == nil {
		return nil
	}
	if apiErr := c.APIError(provider, err, time.Now()); apiErr != nil {
		return apiErr
	}
	return fmt.Errorf("%s: %w", provider, err)
}
