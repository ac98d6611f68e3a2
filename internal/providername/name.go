// Package providername decides which provider a dream's settings name,
// without building it: the rule of provider.Choose (the setting, else the
// keys that are set, else offline), in a package light enough for the
// early start of the hook path, which must not link the SDKs' initialisers
// into its answer.
package providername

import "strings"

// Provider names accepted by --provider and DREAM_PROVIDER.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Offline   = "offline"
)

// Environment variables that hold each provider's key and base URL.
const (
	AnthropicKey  = "ANTHROPIC_API_KEY"
	AnthropicBase = "ANTHROPIC_BASE_URL"
	OpenAIKey     = "OPENAI_API_KEY"
	OpenAIBase    = "OPENAI_BASE_URL"
)

// Resolve names the provider the setting asks for, lower-cased and
// trimmed; "" or "auto" is Anthropic when its key is set, else OpenAI when
// its key is set, else offline. why says how, for `dream config` and
// errors. A name that is none of the three comes back as given (lowered):
// the caller refuses it.
func Resolve(setting string, getenv func(string) string) (name, why string) {
	name = strings.ToLower(strings.TrimSpace(setting))
	if name != "" && name != "auto" {
		return name, "provider setting"
	}
	switch {
	case getenv(AnthropicKey) != "":
		return Anthropic, AnthropicKey + " is set"
	case getenv(OpenAIKey) != "":
		return OpenAI, OpenAIKey + " is set"
	default:
		return Offline, "no model key is set"
	}
}
