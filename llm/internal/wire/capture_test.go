package wire

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		header     map[string]string
		wantAPIErr bool
		wantMsg    string
		wantAfter  time.Duration
	}{
		{"ok passes through", 200, `{"ok":true}`, nil, false, "", 0},
		{"json error", 429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, map[string]string{"Retry-After": "2"}, true, "slow down", 2 * time.Second},
		{"plain text error", 502, "Bad Gateway\n", map[string]string{"Retry-After-Ms": "150"}, true, "Bad Gateway", 150 * time.Millisecond},
		{"no body", 401, "", nil, true, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			var c Capture
			req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
			res, err := c.Middleware(req, http.DefaultClient.Do)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || string(got) != tt.body {
				t.Fatalf("body after middleware = %q, %v; want %q: the SDK must still read it", got, err, tt.body)
			}
			cause := errors.New("sdk")
			apiErr := c.APIError("p", cause, time.Now())
			if (apiErr != nil) != tt.wantAPIErr {
				t.Fatalf("APIError = %v, want present=%v", apiErr, tt.wantAPIErr)
			}
			if apiErr == nil {
				if err := Wrap("p", &c, cause); err == nil || !strings.HasPrefix(err.Error(), "p: ") || !errors.Is(err, cause) {
					t.Errorf("Wrap = %v, want cause prefixed with the provider", err)
				}
				return
			}
			if apiErr.Status != tt.status || apiErr.Message != tt.wantMsg || apiErr.RetryAfter != tt.wantAfter || !errors.Is(apiErr, cause) {
				t.Errorf("APIError = %+v", apiErr)
			}
			var target *llm.APIError
			if err := Wrap("p", &c, cause); !errors.As(err, &target) || target.Status != tt.status {
				t.Errorf("Wrap = %v, want the APIError", err)
			}
		})
	}
}
