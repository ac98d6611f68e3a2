package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of RetryPolicy, chosen for a background job: patient enough to ride
// out a rate-limit window, bounded so a dead endpoint fails the dream within
// minutes rather than hours.
const (
	DefaultMinBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// maxParsedRetryAfter bounds what ParseRetryAfter returns so that absurd
// header values cannot overflow a time.Duration.
const maxParsedRetryAfter = 24 * time.Hour

// RetryPolicy retries one model call. The SDKs' own retry loops are turned
// off in favour of this one so that both providers back off the same way,
// report the same errors, and can be driven fast in tests (MinBackoff).
type RetryPolicy struct {
	// MaxRetries is the number of attempts after the first; negative means 0.
	MaxRetries int
	// MinBackoff is the first back-off, doubled on each retry; 0 means
	// DefaultMinBackoff.
	MinBackoff time.Duration
	// MaxBackoff caps the computed back-off; 0 means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// MaxRetryAfter is the longest server-requested wait that is honoured; a
	// longer one ends the call with the error, since a night job is better
	// retried by the scheduler than parked. 0 means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Timeout bounds each attempt, including reading a streamed body; 0 means
	// no per-attempt bound beyond ctx.
	Timeout time.Duration
	// OnRetry, if set, is told about each retry before its wait.
	OnRetry func(attempt int, wait time.Duration, err error)
}

// Do runs attempt until it succeeds, fails with an error IsRetryable rejects,
// or the retries are spent. Each attempt gets its own context carrying
// Timeout. Cancelling ctx ends the wait at once.
func (p RetryPolicy) Do(ctx context.Context, attempt func(ctx context.Context) error) error {
	retries := max(p.MaxRetries, 0)
	for n := 0; ; n++ {
		err := p.once(ctx, attempt)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(err, cerr) {
				return err
			}
			return fmt.Errorf("%w: %w", cerr, err)
		}
		if !IsRetryable(err) {
			return err
		}
		if n >= retries {
			if n > 0 {
				return fmt.Errorf("%w (gave up after %d attempts)", err, n+1)
			}
			return err
		}
		wait := p.backoff(n)
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			limit := p.MaxRetryAfter
			if limit <= 0 {
				limit = DefaultMaxRetryAfter
			}
			if apiErr.RetryAfter > limit {
				return fmt.Errorf("%w (server asked to wait %s, more than the %s allowed)", err, apiErr.RetryAfter, limit)
			}
			wait = apiErr.RetryAfter
		}
		if p.OnRetry != nil {
			p.OnRetry(n+1, wait, err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w while waiting to retry: %w", ctx.Err(), err)
		case <-timer.C:
		}
	}
}

// once runs one attempt under the per-attempt timeout and turns that
// timeout's expiry into ErrAttemptTimeout, which is retryable, unlike the
// caller's own deadline.
func (p RetryPolicy) once(ctx context.Context, attempt func(ctx context.Context) error) error {
	actx := ctx
	cancel := context.CancelFunc(func() {})
	if p.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, p.Timeout)
	}
	defer cancel()
	err := attempt(actx)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		return fmt.Errorf("%w after %s: %w", ErrAttemptTimeout, p.Timeout, err)
	}
	return err
}

// backoff is MinBackoff·2ⁿ capped at MaxBackoff, with up to 25% jitter taken
// off so that clients that failed together do not retry together.
func (p RetryPolicy) backoff(n int) time.Duration {
	lo := p.MinBackoff
	if lo <= 0 {
		lo = DefaultMinBackoff
	}
	hi := p.MaxBackoff
	if hi <= 0 {
		hi = DefaultMaxBackoff
	}
	d := hi
	if n < 62 {
		if f := float64(lo) * math.Pow(2, float64(n)); f < float64(hi) {
			d = time.Duration(f)
		}
	}
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

// ParseRetryAfter returns the delay a server asked for in its headers:
// retry-after-ms (milliseconds, which Anthropic and OpenAI send), else
// Retry-After as delta-seconds or an HTTP date relative to now. ok is false
// when neither header holds a usable value. The result is never negative and
// at most 24 hours.
func ParseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if d, ok := parseMillis(v); ok {
			return d, true
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		return ParseRetryAfterValue(v, now)
	}
	return 0, false
}

// ParseRetryAfterValue parses one Retry-After value: a non-negative number of
// seconds (fractions allowed, as some proxies send them) or an HTTP date.
func ParseRetryAfterValue(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return clampSeconds(secs)
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return min(d, maxParsedRetryAfter), true
}

func parseMillis(v string) (time.Duration, bool) {
	ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, false
	}
	return clampSeconds(ms / 1000)
}

func clampSeconds(secs float64) (time.Duration, bool) {
	if math.IsNaN(secs) || math.IsInf(secs, 0) || secs < 0 {
		return 0, false
	}
	if secs >= maxParsedRetryAfter.Seconds() {
		return maxParsedRetryAfter, true
	}
	return time.Duration(secs * float64(time.Second)), true
}
