// Package provider chooses the model a dream talks to, and builds its
// client with the official SDK (anthropic-sdk-go, openai-go).
//
// It lives outside package dream so that the root links neither SDK: a host
// that brings its own dream.Runner, or dreams offline with runner.Offline,
// never imports this package. The command line, `dream daemon` and `dream
// mcp` call Choose once and hand the Choice to dream.ConfigForProject, which
// asks it for each project's runner (runner.For).
package provider

import (
	"fmt"
	"strings"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/providername"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/openai"
	"github.com/dreamkit/dream/runner"
)

// Provider names accepted by --provider and DREAM_PROVIDER.
const (
	Anthropic = providername.Anthropic
	OpenAI    = providername.OpenAI
	Offline   = providername.Offline
)

// Choice is the provider dream will use and why. It is the dream.Backend
// of the command line, the daemon and the MCP server; the zero Choice
// dreams offline.
type Choice struct {
	// Name is anthropic, openai or offline.
	Name string
	// Model is the model name ("" for offline).
	Model string
	// Provider is nil for offline.
	Provider llm.Provider
	// Why says how the choice was made, for `dream config` and errors.
	Why string
}

// Choose picks the provider as DESIGN.md promises: the provider setting
// (--provider, DREAM_PROVIDER, config files) if any; else Anthropic when
// ANTHROPIC_API_KEY is set; else OpenAI when OPENAI_API_KEY is set; else
// the offline engine, which sends nothing anywhere. Base URLs come from the
// base_url setting or ANTHROPIC_BASE_URL / OPENAI_BASE_URL, so the OpenAI
// provider also serves Ollama, vLLM, llama.cpp, DeepSeek, Qwen and
// OpenRouter. DREAM_STREAM=1 selects streaming responses.
func Choose(s dream.Settings, getenv func(string) string) (Choice, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	name, why := providername.Resolve(s.Provider, getenv)
	stream := getenv("DREAM_STREAM") == "1" || strings.EqualFold(getenv("DREAM_STREAM"), "true")
	switch name {
	case Offline:
		return Choice{Name: name, Why: why}, nil
	case Anthropic:
		base := firstNonEmpty(s.BaseURL, getenv(providername.AnthropicBase))
		model := firstNonEmpty(s.Model, anthropic.DefaultModel)
		p, err := anthropic.New(anthropic.Options{APIKey: getenv(providername.AnthropicKey), BaseURL: base, Model: model, Stream: stream})
		if err != nil {
			return Choice{}, fmt.Errorf("anthropic provider: %w", err)
		}
		return Choice{Name: name, Model: model, Provider: p, Why: why}, nil
	case OpenAI:
		base := firstNonEmpty(s.BaseURL, getenv(providername.OpenAIBase))
		model := firstNonEmpty(s.Model, openai.DefaultModel)
		p, err := openai.New(openai.Options{APIKey: getenv(providername.OpenAIKey), BaseURL: base, Model: model, Stream: stream})
		if err != nil {
			return Choice{}, fmt.Errorf("openai provider: %w", err)
		}
		return Choice{Name: name, Model: model, Provider: p, Why: why}, nil
	default:
		return Choice{}, fmt.Errorf("unknown provider %q: use anthropic, openai or offline", s.Provider)
	}
}

// Runner implements dream.Backend: runner.For with the chosen model.
func (c Choice) Runner(s dream.Settings) dream.Runner {
	return runner.For(c.Provider, c.Model, s)
}

// JobRunner makes the runner of a job's dreams (a dream.Config whose Job
// is not the memory dream): runner.ForJob with the chosen model; its
// budgets come in each dream.Job.
func (c Choice) JobRunner(dream.Settings) dream.Runner {
	return runner.ForJob(c.Provider, c.Model)
}

// Names implements dream.Backend: the provider and model recorded with
// each dream.
func (c Choice) Names() (provider, model string) { return c.Name, c.Model }

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
