// Package openai runs dream's model turns on OpenAI Chat Completions through
// the official Go SDK. Chat Completions is the lingua franca of local and
// third-party servers, so with BaseURL the same code serves Ollama, vLLM,
// llama.cpp, DeepSeek, Qwen and OpenRouter. Retries and errors follow the
// same policy as the Anthropic adapter (see llm.RetryPolicy).
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/internal/wire"
)

// Name is the provider's short name, used in errors and telemetry.
const Name = "openai"

// DefaultModel is the model callers fall back to when none is configured: a
// small, cheap model with dependable tool calling, which is what a
// background consolidation needs. The SDK marks its constant for this model
// deprecated (a shutdown is announced for 2027-01-14); the name is spelled
// out so the default stays explicit until it is moved to a successor.
const DefaultModel = "gpt-4.1-mini"

// Defaults for the zero values of Options.
const (
	DefaultMaxRetries     = 4
	DefaultRequestTimeout = 2 * time.Minute
	DefaultMaxTokens      = 8192
)

// Options configures a Provider. Only Model is required; APIKey is required
// unless BaseURL points at a server that needs none (Ollama, llama.cpp).
type Options struct {
	// APIKey is sent as a bearer token. The environment is never read here:
	// the caller resolves OPENAI_API_KEY so that settings precedence stays in
	// one place.
	APIKey string
	// BaseURL replaces the API's address, for example a local server's
	// "http://localhost:11434/v1".
	BaseURL string
	// Model is the model id, for example DefaultModel.
	Model string
	// MaxRetries is the number of retries after the first attempt; 0 means
	// DefaultMaxRetries, negative means none.
	MaxRetries int
	// RequestTimeout bounds each attempt, streamed body included; 0 means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Stream receives the answer as chunks (with stream_options.include_usage)
	// and accumulates it; the result is the same as without streaming.
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

// Provider is an llm.Provider over Chat Completions.
type Provider struct {
	// The SDK service is built on the first request, not in New: a process
	// that only checks gates never pays for it.
	chatOnce  sync.Once
	chatOpts  []option.RequestOption
	chat      sdk.ChatCompletionService
	model     string
	maxTokens int
	stream    bool
	// legacyMaxTokens sends max_tokens instead of max_completion_tokens:
	// OpenAI rejects max_tokens for its reasoning models, while several
	// compatible servers understand only max_tokens.
	legacyMaxTokens bool
	retry           llm.RetryPolicy
}

var _ llm.Provider = (*Provider)(nil)

// New checks o and builds a Provider. It sends nothing.
func New(o Options) (*Provider, error) {
	if o.Model == "" {
		return nil, fmt.Errorf("openai: no model configured (set --model or DREAM_MODEL, for example %s)", DefaultModel)
	}
	if o.APIKey == "" && o.BaseURL == "" {
		return nil, errors.New("openai: no API key (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server that needs none)")
	}
	legacy := false
	if o.BaseURL != "" {
		u, err := checkBaseURL(o.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("openai: base URL %q: %w", o.BaseURL, err)
		}
		legacy = !isOpenAIHost(u.Hostname())
	}
	if o.MaxTokens < 0 {
		return nil, fmt.Errorf("openai: max tokens %d is negative", o.MaxTokens)
	}
	p := &Provider{model: o.Model, maxTokens: o.MaxTokens, stream: o.Stream, legacyMaxTokens: legacy}
	if p.maxTokens == 0 {
		p.maxTokens = DefaultMaxTokens
	}
	timeout := o.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	retries := o.MaxRetries
	if retries == 0 {
		retries = DefaultMaxRetries
	}
	p.retry = llm.RetryPolicy{MaxRetries: retries, MinBackoff: o.MinBackoff, MaxBackoff: o.MaxBackoff, Timeout: timeout}

	// The service is built directly, not through sdk.NewClient, which would
	// read OPENAI_* variables (organisation, project, custom headers) and
	// send them to whatever server BaseURL names. Retries are ours.
	opts := []option.RequestOption{option.WithEnvironmentProduction(), option.WithMaxRetries(0)}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	p.chatOpts = opts
	return p, nil
}

func checkBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("want an http or https URL")
	}
	if u.Host == "" {
		return nil, errors.New("no host")
	}
	return u, nil
}

// isOpenAIHost reports whether host is OpenAI's own API (or Azure's), which
// want max_completion_tokens.
func isOpenAIHost(host string) bool {
	host = strings.ToLower(host)
	return host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com")
}

// Name returns "openai".
func (p *Provider) Name() string { return Name }

// Complete sends req and returns the assistant's turn, retrying 429, 5xx and
// connection failures. Cancelling ctx aborts at once, mid-wait included.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if req == nil {
		return nil, errors.New("openai: nil request")
	}
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
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
func (p *Provider) once(ctx context.Context, params sdk.ChatCompletionNewParams) (*llm.Response, error) {
	capture := &wire.Capture{}
	opts := []option.RequestOption{option.WithMiddleware(capture.Middleware)}
	if !p.stream {
		c, err := p.service().New(ctx, params, opts...)
		if err != nil {
			return nil, wire.Wrap(Name, capture, err)
		}
		return fromCompletion(c, c.Usage)
	}
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	stream := p.service().NewStreaming(ctx, params, opts...)
	defer stream.Close()
	var acc sdk.ChatCompletionAccumulator
	var usage sdk.CompletionUsage
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return nil, errors.New("openai: malformed stream: chunk rejected by the accumulator")
		}
		// The usage chunk comes last with no choices; keep it whole rather
		// than the accumulator's sum, which drops cache-write counts.
		if chunk.JSON.Usage.Valid() {
			usage = chunk.Usage
		}
	}
	if err := stream.Err(); err != nil {
		return nil, wire.Wrap(Name, capture, err)
	}
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		return nil, fmt.Errorf("openai: %w", llm.ErrIncompleteStream)
	}
	if !usage.JSON.PromptTokens.Valid() {
		// A server that ignores include_usage may still put usage on its
		// chunks; the accumulator has summed those.
		usage = acc.Usage
	}
	return fromCompletion(&acc.ChatCompletion, usage)
}

// service returns the SDK's chat service, building it on first use.
func (p *Provider) service() *sdk.ChatCompletionService {
	p.chatOnce.Do(func() { p.chat = sdk.NewChatCompletionService(p.chatOpts...) })
	return &p.chat
}
