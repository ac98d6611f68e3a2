// Package provider chooses the model a dream talks to, and builds its
// client with the official SDK (anthropic-sdk-go, openai-go).
//
// It lives outside package dream so that the root links neither SDK: a host
// that brings its own dream.Runner, or dreams offline with runner.Offline,
// never imports this package. The command line, `dream daemon` and `dream
// mcp` call Choose once and hand the Choice to hostcfg.For, which
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
	"github.com/dreamkit/dream/settings"
)

// Provider names accepted by --provider and DREAM_PROVIDER.
const (
	Anthropic = providername.Anthropic
	OpenAI    = providername.OpenAI
	Offline   = providername.Offline
)

// Choice is the provider dream will use and why. It is the hostcfg.Backend
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
	// Unused are the model keys set in the environment that this choice
	// does not spend, each with how to give it to dream.
	Unused []Unused
	// Rejected is set when the choice fell back offline because the
	// endpoint rejected the model before (see Options.StateDir).
	Rejected *Rejection
}

// Unused is a model key present in the environment and not spent.
type Unused struct {
	// Var is the variable (ANTHROPIC_API_KEY); its value is never kept.
	Var string `json:"var"`
	// Enable is what gives it to dream.
	Enable string `json:"enable"`
}

// Options say where dream runs, which decides whether a key in the
// environment is the user's to dream with.
type Options struct {
	// Inherited says the environment is not the user's own shell: dream
	// runs under an agent (`dream hook` and the dream it starts, `dream
	// maybe --hook`, `dream mcp`) or as a service (`dream daemon`), so the
	// keys it sees were set for the agent, not given to dream. They are
	// spent only with an explicit provider or model in dream's own
	// settings (the user's config file, a trusted project file, DREAM_*,
	// a flag); a base URL found there is used only with its own key.
	Inherited bool
	// Agent is the agent dream runs under, for the hint that gives it a
	// key ("dream init claude --model-dreams"); "" names none.
	Agent string
}

// Choose picks the provider for a command the user typed in their own
// shell, where an exported key counts as given to dream (ChooseWith with
// no Options).
func Choose(s settings.Settings, getenv func(string) string) (Choice, error) {
	return ChooseWith(s, getenv, Options{})
}

// ChooseWith picks the provider as DESIGN.md promises: the provider
// setting (--provider, DREAM_PROVIDER, config files) if any; else
// Anthropic when ANTHROPIC_API_KEY is set; else OpenAI when OPENAI_API_KEY
// is set; else the offline engine, which sends nothing anywhere. In an
// inherited environment (Options.Inherited) a key alone is not enough:
// without a provider or model setting the dream is offline, and Unused
// says how to consent. Base URLs come from the base_url setting or
// ANTHROPIC_BASE_URL / OPENAI_BASE_URL, so the OpenAI provider also serves
// Ollama, vLLM, llama.cpp, DeepSeek, Qwen and OpenRouter. A model the
// endpoint rejected before (recorded in the state dir) is not asked again
// until the provider, model or base URL changes: the dream is offline and
// Rejected says why. DREAM_STREAM=1 selects streaming responses.
func ChooseWith(s settings.Settings, getenv func(string) string, o Options) (Choice, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	name, why := providername.Resolve(s.Provider, getenv)
	explicit := strings.TrimSpace(s.Provider) != "" || strings.TrimSpace(s.Model) != ""
	if o.Inherited && !explicit && name != Offline {
		c := Choice{Name: Offline, Why: keyOf(name) + " is set in the environment dream inherited from " + inheritedFrom(o) +
			", which does not give it to dream: model dreams need your say-so"}
		c.Unused = unused(getenv, c.Name, o)
		return c, nil
	}
	if explicit && o.Inherited && why != "provider setting" {
		why += " and a model is set in dream's settings"
	}
	stream := getenv("DREAM_STREAM") == "1" || strings.EqualFold(getenv("DREAM_STREAM"), "true")
	var c Choice
	switch name {
	case Offline:
		c = Choice{Name: name, Why: why}
	case Anthropic, OpenAI:
		base, keyVar, baseVar := s.BaseURL, providername.AnthropicKey, providername.AnthropicBase
		model := firstNonEmpty(s.Model, anthropic.DefaultModel)
		if name == OpenAI {
			keyVar, baseVar = providername.OpenAIKey, providername.OpenAIBase
			model = firstNonEmpty(s.Model, openai.DefaultModel)
		}
		if base == "" {
			if env := getenv(baseVar); env != "" {
				if o.Inherited && getenv(keyVar) == "" {
					// Another credential (an agent's gateway token) must
					// not be stood in for by whatever dream would send.
					c = Choice{Name: Offline, Why: baseVar + " is inherited without " + keyVar + ": dream sends nothing to it; set base_url in dream's config to use that endpoint"}
					c.Unused = unused(getenv, c.Name, o)
					return c, nil
				}
				base = env
			}
		}
		if rej := rejected(s.StateDir, name, base, model); rej != nil {
			c = Choice{Name: Offline, Why: rej.String(), Rejected: rej}
			break
		}
		p, err := newProvider(name, getenv(keyVar), base, model, stream)
		if err != nil {
			return Choice{}, fmt.Errorf("%s provider: %w", name, err)
		}
		c = Choice{Name: name, Model: model, Provider: &rejectionGuard{Provider: p, stateDir: s.StateDir, name: name, base: base, model: model}, Why: why}
	default:
		return Choice{}, fmt.Errorf("unknown provider %q: use anthropic, openai or offline", s.Provider)
	}
	// A key whose endpoint rejected the model is not unused for want of
	// consent: the settings already give it; the model is the trouble.
	given := c.Name
	if c.Rejected != nil {
		given = c.Rejected.Provider
	}
	c.Unused = unused(getenv, given, o)
	return c, nil
}

func newProvider(name, key, base, model string, stream bool) (llm.Provider, error) {
	if name == Anthropic {
		return anthropic.New(anthropic.Options{APIKey: key, BaseURL: base, Model: model, Stream: stream})
	}
	return openai.New(openai.Options{APIKey: key, BaseURL: base, Model: model, Stream: stream})
}

// Explain is Why, for the task entry and the telemetry (dream.Config's
// ProviderWhy).
func (c Choice) Explain() string { return c.Why }

func keyOf(name string) string {
	if name == OpenAI {
		return providername.OpenAIKey
	}
	return providername.AnthropicKey
}

func inheritedFrom(o Options) string {
	if o.Agent != "" {
		return o.Agent
	}
	return "the agent or service that started it"
}

// unused lists the keys set in the environment that the provider chosen
// does not spend, each with what gives it to dream: under an agent, dream
// init AGENT --model-dreams; otherwise the provider setting.
func unused(getenv func(string) string, chosen string, o Options) []Unused {
	var out []Unused
	for _, p := range []string{Anthropic, OpenAI} {
		if p == chosen || getenv(keyOf(p)) == "" {
			continue
		}
		enable := fmt.Sprintf("provider = %q in dream's config.toml (or DREAM_PROVIDER=%s, --provider %s)", p, p, p)
		if o.Inherited && o.Agent != "" {
			enable = fmt.Sprintf("dream init %s --model-dreams (it records provider = %q in dream's config.toml and shows the cost), or %s", o.Agent, p, enable)
		}
		out = append(out, Unused{Var: keyOf(p), Enable: enable})
	}
	return out
}

// Runner implements hostcfg.Backend: runner.For with the chosen model.
func (c Choice) Runner(s settings.Settings) dream.Runner {
	return runner.For(c.Provider, c.Model, s)
}

// JobRunner makes the runner of a job's dreams (a dream.Config whose Job
// is not the memory dream): runner.ForJob with the chosen model; its
// budgets come in each dream.Job.
func (c Choice) JobRunner(settings.Settings) dream.Runner {
	return runner.ForJob(c.Provider, c.Model)
}

// Names implements hostcfg.Backend: the provider and model recorded with
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
