package runner_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

type nopProvider struct{}

func (nopProvider) Name() string { return "nop" }
func (nopProvider) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	return &llm.Response{StopReason: llm.StopEndTurn}, nil
}

// For is the one choice of runner: no model is the offline engine on every
// host; a model is nanobot's history dream on nanobot's host and the agent
// everywhere else, each with the budgets, host and state dir it is given.
func TestFor(t *testing.T) {
	var p llm.Provider = nopProvider{}
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir, s.MaxTurns, s.MaxTokens = "state", 9, 123456
	for _, tc := range []struct {
		name  string
		p     llm.Provider
		host  string
		model string
		want  dream.Runner
	}{
		{name: "offline, no host", want: &runner.Offline{StateDir: "state"}},
		{name: "offline on codex", host: "codex", want: &runner.Offline{Host: "codex", StateDir: "state"}},
		{name: "offline on nanobot", host: nanobot.HostName, want: &runner.Offline{Host: nanobot.HostName, StateDir: "state"}},
		{name: "model on claude", p: p, model: "m", host: "claude", want: &runner.Agent{Provider: p, Model: "m", MaxTurns: 9, MaxTokens: 123456, Host: "claude", StateDir: "state", MaxRequestTokens: s.MaxRequestTokens}},
		{name: "model, no host", p: p, model: "m", want: &runner.Agent{Provider: p, Model: "m", MaxTurns: 9, MaxTokens: 123456, StateDir: "state", MaxRequestTokens: s.MaxRequestTokens}},
		{name: "model on nanobot", p: p, model: "m", host: nanobot.HostName, want: &runner.HistoryDream{Provider: p, Model: "m", MaxTurns: 9, MaxTokens: 123456}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := s
			s.Host = tc.host
			if got := runner.For(tc.p, tc.model, s); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("For = %#v, want %#v", got, tc.want)
			}
		})
	}
}

// The shipped runners that replace files say so, and get the linked
// staging; the history dream never promised it and keeps a full copy.
func TestShippedRunnersReplaceFiles(t *testing.T) {
	for _, r := range []dream.Runner{&runner.Offline{}, &runner.Agent{}} {
		if fr, ok := r.(dream.FileReplacer); !ok || !fr.ReplacesFiles() {
			t.Errorf("%T does not promise to replace files", r)
		}
	}
	if _, ok := dream.Runner(&runner.HistoryDream{}).(dream.FileReplacer); ok {
		t.Error("the history dream now promises to replace files, so it gets the linked staging: a deliberate change needs a test that each of its writes replaces")
	}
}
