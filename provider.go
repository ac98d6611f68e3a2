package dream

import (
	"fmt"
	"strings"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/openai"
)

// Provider names accepted by --provider and DREAM_PROVIDER.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderOffline   = "offline"
)

// Choice is the provider dream will use and why.
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

// ChooseProvider picks the provider as DESIGN.md promises: the provider
// setting (--provider, DREAM_PROVIDER, config files) if any; else Anthropic
// when ANTHROPIC_API_KEY is set; else OpenAI when OPENAI_API_KEY is set;
// else the offline engine, which sends nothing anywhere. Base URLs come from
// the base_url setting or ANTHROPIC_BASE_URL / OPENAI_BASE_URL, so the
// OpenAI provider also serves Ollama, vLLM, llama.cpp, DeepSeek, Qwen and
// OpenRouter. DREAM_STREAM=1 selects streaming responses.
func ChooseProvider(s Settings, getenv func(string) string) (Choice, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	name := strings.ToLower(strings.TrimSpace(s.Provider))
	why := "provider setting"
	if name == "" || name == "auto" {
		switch {
		case getenv("ANTHROPIC_API_KEY") != "":
			name, why = ProviderAnthropic, "ANTHROPIC_API_KEY is set"
		case getenv("OPENAI_API_KEY") != "":
			name, why = ProviderOpenAI, "OPENAI_API_KEY is set"
		default:
			name, why = ProviderOffline, "no model key is set"
		}
	}
	stream := getenv("DREAM_STREAM") == "1" || strings.EqualFold(getenv("DREAM_STREAM"), "true")
	switch name {
	case ProviderOffline:
		return Choice{Name: name, Why: why}, nil
	case ProviderAnthropic:
		base := firstNonEmpty(s.BaseURL, getenv("ANTHROPIC_BASE_URL"))
		model := firstNonEmpty(s.Model, anthropic.DefaultModel)
		p, err := anthropic.New(anthropic.Options{APIKey: getenv("ANTHROPIC_API_KEY"), BaseURL: base, Model: model, Stream: stream})
		if err != nil {
			return Choice{}, fmt.Errorf("anthropic provider: %w", err)
		}
		return Choice{Name: name, Model: model, Provider: p, Why: why}, nil
	case ProviderOpenAI:
		base := firstNonEmpty(s.BaseURL, getenv("OPENAI_BASE_URL"))
		model := firstNonEmpty(s.Model, openai.DefaultModel)
		p, err := openai.New(openai.Options{APIKey: getenv("OPENAI_API_KEY"), BaseURL: base, Model: model, Stream: stream})
		if err != nil {
			return Choice{}, fmt.Errorf("openai provider: %w", err)
		}
		return Choice{Name: name, Model: model, Provider: p, Why: why}, nil
	default:
		return Choice{}, fmt.Errorf("unknown provider %q: use anthropic, openai or offline", s.Provider)
	}
}

// RunnerFor returns the Runner for a provider choice and settings.
func RunnerFor(c Choice, s Settings) Runner {
	if c.Provider == nil {
		return &OfflineRunner{Host: s.Host, StateDir: s.StateDir}
	}
	return &AgentRunner{Provider: c.Provider, Model: c.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, Host: s.Host, StateDir: s.StateDir}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
