// Package runner holds the Runners dream ships: the model-driven Agent,
// the zero-token Offline engine and nanobot's HistoryDream, and For, the
// one place that picks among them for a project's host.
//
// They live outside package dream so that a host bringing its own
// dream.Runner links none of their machinery (the sub-agent, its sandboxed
// tools, the prompts). This package imports no model SDK either: a model is
// an llm.Provider, built by package provider or by the host, so a host
// that dreams only offline links neither SDK.
package runner

import (
	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/settings"
)

// For returns the Runner of a dream with settings s on a model (nil: the
// offline engine). It is the one place the command line, `dream daemon` and
// `dream mcp` choose a runner (through provider.Choice, the hostcfg.Backend
// that hostcfg.For asks), so that one host dreams the same way
// from all three: nanobot's workspace gets the history dream, which needs
// a model (without one it gets the offline engine); every other host gets
// the Agent, or Offline without a model.
// s.Host names the project's host and s.StateDir the state dir whose
// audit history dates lines.
func For(p llm.Provider, model string, s settings.Settings) dream.Runner {
	switch {
	case p == nil:
		return &Offline{Host: s.Host, StateDir: s.StateDir}
	case s.Host == nanobot.HostName:
		return &HistoryDream{Provider: p, Model: model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens}
	default:
		return &Agent{Provider: p, Model: model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, Host: s.Host, StateDir: s.StateDir, MaxRequestTokens: s.MaxRequestTokens}
	}
}
