package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
		ok      bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{"spaces", map[string]string{"Retry-After": "  2 "}, 2 * time.Second, true},
		{"zero", map[string]string{"Retry-After": "0"}, 0, true},
		{"negative", map[string]string{"Retry-After": "-1"}, 0, false},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"NaN", map[string]string{"Retry-After": "NaN"}, 0, false},
		{"Inf", map[string]string{"Retry-After": "+Inf"}, 0, false},
		{"huge seconds capped", map[string]string{"Retry-After": "99999999999"}, 24 * time.Hour, true},
		{"http date", map[string]string{"Retry-After": "Sat, 01 Mar 2025 12:00:10 GMT"}, 10 * time.Second, true},
		{"http date past", map[string]string{"Retry-After": "Sat, 01 Mar 2025 11:00:00 GMT"}, 0, true},
		{"http date far future capped", map[string]string{"Retry-After": "Sat, 01 Mar 2125 11:00:00 GMT"}, 24 * time.Hour, true},
		{"ms wins", map[string]string{"Retry-After": "5", "Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{"bad ms falls back", map[string]string{"Retry-After": "5", "Retry-After-Ms": "x"}, 5 * time.Second, true},
		{"fractional ms", map[string]string{"Retry-After-Ms": "1.5"}, 1500 * time.Microsecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			got, ok := ParseRetryAfter(h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseRetryAfter(%v) = %v, %v; want %v, %v", tt.headers, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseRetryAfterValue(f *testing.F) {
	for _, s := range []string{"1", "0.5", "-3", "Sat, 01 Mar 2025 12:00:10 GMT", "Monday, 02-Jan-06 15:04:05 MST", "1e9", "NaN", ""} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseRetryAfterValue(s, now)
		if d < 0 || d > 24*time.Hour {
			t.Fatalf("ParseRetryAfterValue(%q) = %v out of [0, 24h]", s, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfterValue(%q) = %v with ok=false", s, d)
		}
	})
}

func TestBackoffBounds(t *testing.T) {
	p := RetryPolicy{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	tests := []struct {
		n      int
		lo, hi time.Duration
	}{
		{0, 75 * time.Millisecond, 100 * time.Millisecond},
		{1, 150 * time.Millisecond, 200 * time.Millisecond},
		{3, 600 * time.Millisecond, 800 * time.Millisecond},
		{4, 750 * time.Millisecond, time.Second},
		{200, 750 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		for range 20 {
			if d := p.backoff(tt.n); d < tt.lo || d > tt.hi {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", tt.n, d, tt.lo, tt.hi)
			}
		}
	}
	if d := (RetryPolicy{}).backoff(0); d < DefaultMinBackoff*3/4 || d > DefaultMinBackoff {
		t.Errorf("default backoff(0) = %v", d)
	}
}

// flaky fails with errs in turn, then succeeds.
func flaky(calls *atomic.Int32, errs ...error) func(context.Context) error {
	return func(ctx context.Context) error {
		n := int(calls.Add(1)) - 1
		if n < len(errs) {
			return errs[n]
		}
		return nil
	}
}

func TestRetryPolicyDo(t *testing.T) {
	e500 := &APIError{Provider: "p", Status: 500}
	e401 := &APIError{Provider: "p", Status: 401, Message: "bad key"}
	e429 := &APIError{Provider: "p", Status: 429, RetryAfter: 80 * time.Millisecond}
	eLong := &APIError{Provider: "p", Status: 429, RetryAfter: time.Hour}
	fast := RetryPolicy{MaxRetries: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
	tests := []struct {
		name      string
		policy    RetryPolicy
		errs      []error
		wantCalls int32
		wantErr   error
		minTime   time.Duration
	}{
		{"success first", fast, nil, 1, nil, 0},
		{"retry then success", fast, []error{e500, e500}, 3, nil, 0},
		{"not retryable", fast, []error{e401}, 1, e401, 0},
		{"retries spent", fast, []error{e500, e500, e500, e500, e500}, 4, e500, 0},
		{"no retries", RetryPolicy{MaxRetries: -1}, []error{e500}, 1, e500, 0},
		{"retry-after honoured", fast, []error{e429}, 2, nil, 80 * time.Millisecond},
		{"retry-after too long", fast, []error{eLong}, 1, eLong, 0},
		{"connection error", fast, []error{fmt.Errorf("dial: %w", ErrIncompleteStream)}, 2, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			start := time.Now()
			err := tt.policy.Do(context.Background(), flaky(&calls, tt.errs...))
			if tt.wantErr == nil && err != nil {
				t.Fatalf("Do: %v", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Do = %v, want %v", err, tt.wantErr)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
			if el := time.Since(start); el < tt.minTime {
				t.Errorf("took %v, want at least %v", el, tt.minTime)
			}
		})
	}
}

func TestRetryPolicyCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := RetryPolicy{MaxRetries: 5, MinBackoff: time.Hour, MaxBackoff: time.Hour}
	var calls atomic.Int32
	p.OnRetry = func(int, time.Duration, error) { cancel() }
	start := time.Now()
	err := p.Do(ctx, flaky(&calls, &APIError{Status: 503}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("cancel took %v", el)
	}
}

func TestRetryPolicyAttemptTimeout(t *testing.T) {
	var calls atomic.Int32
	p := RetryPolicy{MaxRetries: 2, MinBackoff: time.Millisecond, Timeout: 30 * time.Millisecond}
	err := p.Do(context.Background(), func(ctx context.Context) error {
		if calls.Add(1) == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Do: %v (the timed-out attempt should have been retried)", err)
	}
	if calls.Load() != 2 {
		t.Errorf("calls = %d, want 2", calls.Load())
	}

	calls.Store(0)
	p.MaxRetries = -1
	err = p.Do(context.Background(), func(ctx context.Context) error {
		calls.Add(1)
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, ErrAttemptTimeout) || !IsRetryable(err) {
		t.Fatalf("Do = %v, want a retryable ErrAttemptTimeout", err)
	}
}

func TestRetryPolicyCallerDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	p := RetryPolicy{MaxRetries: 3, MinBackoff: time.Millisecond, Timeout: time.Hour}
	var calls atomic.Int32
	err := p.Do(ctx, func(ctx context.Context) error {
		calls.Add(1)
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrAttemptTimeout) {
		t.Fatalf("Do = %v, want the caller's deadline", err)
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d, want 1: the caller's deadline is not retried", calls.Load())
	}
}
