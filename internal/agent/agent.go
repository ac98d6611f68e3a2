package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/settings"
)

// Defaults applied when the corresponding Config field is zero.
const (
	DefaultMaxTurns        = settings.DefaultMaxTurns
	DefaultMaxTokens       = settings.DefaultMaxTokens
	DefaultMaxRefusedTurns = 5
	// DefaultMaxOutputTokens is the output cap the providers send for a
	// request that sets none (llm/anthropic and llm/openai): a budget that
	// leaves less than this lowers the request's cap.
	DefaultMaxOutputTokens = 8192
	// DefaultToolTimeout bounds one tool call. The tools stream and cap
	// their output, so a healthy call takes milliseconds to seconds even
	// on a multi-gigabyte transcript; one still running after this is
	// stuck, not slow.
	DefaultToolTimeout = 2 * time.Minute
)

// Stop values of Result.Stop.
const (
	StopEndTurn  = "end_turn"   // the model finished without asking for tools
	StopMaxTurns = "max_turns"  // Config.MaxTurns requests were made
	StopBudget   = "max_tokens" // Config.MaxTokens was or would be exceeded
	StopLoop     = "loop"       // too many consecutive turns of refused calls
	StopCanceled = "canceled"   // ctx was cancelled or timed out
	StopError    = "error"      // the provider failed
	StopCeiling  = "ceiling"    // Config.Budget refused the next request
	StopContext  = "context"    // the next request would exceed Config.MaxRequestTokens
)

// Errors returned (wrapped) by Run when a budget ends the dream. The Result
// is still filled in, so the caller can report what was done before the stop.
var (
	ErrMaxTurns = errors.New("agent: turn limit reached before the model finished")
	ErrBudget   = errors.New("agent: token budget exhausted")
	ErrLooping  = errors.New("agent: model is looping on refused tool calls")
	// ErrContextFull: the conversation grew past Config.MaxRequestTokens.
	ErrContextFull = errors.New("agent: the next request would exceed the per-request input cap")
)

// Config is one run of the loop.
type Config struct {
	Provider llm.Provider
	Model    string
	// MaxOutputTokens is the per-request output cap sent to the provider.
	MaxOutputTokens int

	// System is the system prompt, identical on every request.
	System string
	// Task is the first (and only non-tool-result) user message.
	Task string
	// Tools are offered to the model in this order on every request.
	Tools []tools.Tool

	// MaxTurns caps model requests; DefaultMaxTurns when zero.
	MaxTurns int
	// MaxTokens caps the sum of Usage.Total over all responses;
	// DefaultMaxTokens when zero.
	MaxTokens int64
	// MaxRequestTokens caps the input of one request (estimated before it
	// is sent, conservatively); the run stops with ErrContextFull rather
	// than send a larger one. 0 is no cap.
	MaxRequestTokens int64
	// Budget, when set, is asked before each request with the usage so
	// far and the request's input, estimated conservatively: the previous
	// request, which it re-sends, as CacheReadInputTokens when the
	// provider has been reading it from its cache, and the rest as
	// InputTokens. It returns the most output tokens the request may ask
	// for (the request's cap is lowered to it when that is less than the
	// usual one), or an error that stops the run before the request is
	// sent (StopCeiling): the spending ceilings of package spend.
	Budget func(used, next llm.Usage) (maxOutput int, err error)
	// MaxRefusedTurns is how many consecutive turns in which every tool call
	// was refused end the run with ErrLooping; DefaultMaxRefusedTurns when
	// zero.
	MaxRefusedTurns int
	// ToolTimeout bounds each tool call; a call still running then is
	// abandoned with an error result. DefaultToolTimeout when zero. The
	// dream's own context bounds every call too.
	ToolTimeout time.Duration

	// OnEvent is called synchronously from the loop; it may be nil.
	OnEvent func(Event)
}

// Result is what a run did, filled in even when Run returns an error.
type Result struct {
	Turns     int
	ToolCalls int
	Usage     llm.Usage
	// FilesTouched are the memory files successfully written or edited,
	// relative to the memory dir, without duplicates, in first-touch order.
	FilesTouched []string
	// Summary is the last assistant text the model produced.
	Summary string
	// Stop says why the loop ended; one of the Stop* constants, or
	// "model_<reason>" when the model stopped without tool calls for a
	// reason other than end_turn.
	Stop string
}

// validate checks cfg and returns a copy with defaults applied.
func (cfg Config) validate() (Config, error) {
	if cfg.Provider == nil {
		return cfg, errors.New("agent: no provider")
	}
	if cfg.Task == "" {
		return cfg, errors.New("agent: empty task")
	}
	if cfg.MaxTurns < 0 || cfg.MaxTokens < 0 || cfg.MaxRefusedTurns < 0 || cfg.MaxOutputTokens < 0 || cfg.ToolTimeout < 0 || cfg.MaxRequestTokens < 0 {
		return cfg, fmt.Errorf("agent: negative limit (turns %d, tokens %d, refused turns %d, output tokens %d)",
			cfg.MaxTurns, cfg.MaxTokens, cfg.MaxRefusedTurns, cfg.MaxOutputTokens)
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.MaxRefusedTurns == 0 {
		cfg.MaxRefusedTurns = DefaultMaxRefusedTurns
	}
	if cfg.ToolTimeout == 0 {
		cfg.ToolTimeout = DefaultToolTimeout
	}
	return cfg, nil
}
