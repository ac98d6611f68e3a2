// Package anthropic runs dream's model turns on the Anthropic Messages API
// through the official Go SDK. It adds what a night job needs on top of the
// SDK: prompt-cache breakpoints placed so that each request re-reads the
// previous one from cache, one retry policy shared with the OpenAI adapter
// (Retry-After honoured, fast in tests), and errors that name the provider
// and the HTTP status.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/internal/wire"
)

// Name is the provider's short name, used in errors and telemetry.
const Name = "anthropic"

// DefaultModel is the model callers fall back to when none is configured:
// the SDK's current Sonnet, the balance of cost and tool-use quality a
// background consolidation wants.
const DefaultModel = sdk.ModelClaudeSonnet4_6

// Defaults for the zero values of Options.
const (
	DefaultMaxRetries     = 4
	DefaultRequestTimeout = 2 * time.Minute
	DefaultMaxTokens      = 8192
)

// Options configures a Provider. Only Model is required; APIKey is required
// unless BaseURL points at a server that needs none.
type Options struct {
	// APIKey is sent as x-api-key. The environment is never read here: the
	// caller resolves ANTHROPIC_API_KEY so that settings precedence stays in
	// one place.
	APIKey string
	// BaseURL replaces the API's address (a proxy, a gateway, llmtest).
	BaseURL string
	// Model is the model id, for example DefaultModel.
	Model string
	// MaxRetries is the number of retries after the first attempt; 0 means
	// DefaultMaxRetries, negative means none.
	MaxRetries int
	// RequestTimeout bounds each attempt, streamed body included; 0 means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Stream receives the answer as server-sent events and accumulates it;
	// the result is the same as without streaming.
	Stream bool
	// HTTPClient, if set, sends the requests.
	HTTPClient *http.Client
	// MaxTokens is the output cap of a request that sets none; 0 means
	// DefaultMaxTokens.
	MaxTokens int
	// MinBackoff is the first retry back-off (doubled each retry); 0 means
	// llm.DefaultMinBackoff. Tests set it to milliseconds.
	MinBackoff time.Duration
	// MaxBackoff caps the back-off; 0 means llm.DefaultMaxBackoff.
	MaxBackoff time.Duration
}

// Provider is an llm.Provider over the Anthropic Messages API.
type Provider struct {
	// The SDK client is built on the first request, not in New: a process
	// that only checks gates (`dream maybe` with the time gate closed)
	// never pays for it.
	clientOnce sync.Once
	clientOpts []option.RequestOption
	client     sdk.Client
	model      string
	maxTokens  int
	stream     bool
	timeout    time.Duration
	retry      llm.RetryPolicy
}

var _ llm.Provider = (*Provider)(nil)

// New checks o and builds a Provider. It sends nothing.
func New(o Options) (*Provider, error) {
	if o.Model == "" {
		return nil, fmt.Errorf("anthropic: no model configured (set --model or DREAM_MODEL, for example %s)", DefaultModel)
	}
	if o.APIKey == "" && o.BaseURL == "" {
		return nil, errors.New("anthropic: no API key (set ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL for a server that needs none)")
	}
	if o.BaseURL != "" {
		if err := checkBaseURL(o.BaseURL); err != nil {
			return nil, fmt.Errorf("anthropic: base URL %q: %w", o.BaseURL, err)
		}
	}
	if o.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: max tokens %d is negative", o.MaxTokens)
	}
	p := &Provider{
		model:     o.Model,
		maxTokens: o.MaxTokens,
		stream:    o.Stream,
		timeout:   o.RequestTimeout,
	}
	if p.maxTokens == 0 {
		p.maxTokens = DefaultMaxTokens
	}
	if p.timeout <= 0 {
		p.timeout = DefaultRequestTimeout
	}
	retries := o.MaxRetries
	if retries == 0 {
		retries = DefaultMaxRetries
	}
	p.retry = llm.RetryPolicy{MaxRetries: retries, MinBackoff: o.MinBackoff, MaxBackoff: o.MaxBackoff, Timeout: p.timeout}

	// WithoutEnvironmentDefaults: the SDK would otherwise pick up
	// ANTHROPIC_* variables and profile files behind the caller's back.
	// Retries are ours (p.retry), so the SDK's are off.
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0)}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	p.clientOpts = opts
	return p, nil
}

// sdkClient returns the SDK client, building it on first use.
func (p *Provider) sdkClient() *sdk.Client {
	p.clientOnce.Do(func() { p.client = sdk.NewClient(p.clientOpts...) })
	return &p.client
}

func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("want an http or https URL")
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return Name }

// Complete sends req and returns the assistant's turn, retrying 429, 5xx and
// connection failures. Cancelling ctx aborts at once, mid-wait included.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if req == nil {
		return nil, errors.New("anthropic: nil request")
	}
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	var resp *llm.Response
	err = p.retry.Do(ctx, func(ctx context.Context) error {
		r, err := p.once(ctx, params)
		if err != nil {
			return err
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// once is one attempt.
func (p *Provider) once(ctx context.Context, params sdk.MessageNewParams) (*llm.Response, error) {
	capture := &wire.Capture{}
	opts := []option.RequestOption{option.WithMiddleware(capture.Middleware)}
	if !p.stream {
		// An explicit timeout also stops the SDK from refusing large
		// max_tokens without streaming; ours (p.retry) bounds the attempt.
		opts = append(opts, option.WithRequestTimeout(p.timeout))
		msg, err := p.sdkClient().Messages.New(ctx, params, opts...)
		if err != nil {
			return nil, wrapErr(capture, err)
		}
		return fromMessage(msg)
	}
	stream := p.sdkClient().Messages.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	var msg sdk.Message
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("anthropic: malformed stream: %w", err)
		}
		if ev.Type == "message_stop" {
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, wrapErr(capture, err)
	}
	if !stopped {
		return nil, fmt.Errorf("anthropic: %w", llm.ErrIncompleteStream)
	}
	return fromMessage(&msg)
}

// wrapErr turns an SDK error into an *llm.APIError when the server answered
// with an error: from the HTTP status, or, for an error event inside a 200
// stream, from the status its error type stands for.
func wrapErr(capture *wire.Capture, err error) error {
	var sdkErr *sdk.Error
	if errors.As(err, &sdkErr) && sdkErr.StatusCode < 400 {
		status := wire.StatusForErrorType(string(sdkErr.Type()))
		msg := sdkErr.Message
		if msg == "" {
			msg = string(sdkErr.Type())
		}
		return &llm.APIError{Provider: Name, Status: status, Message: "stream error: " + msg, Err: err}
	}
	return wire.Wrap(Name, capture, err)
}
