package provider_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/llm/openai"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// TestChooseOrder pins the order DESIGN.md promises: the provider setting,
// then ANTHROPIC_API_KEY, then OPENAI_API_KEY, then offline. A model
// choice is proved by a real request to the scripted model server at the
// base URL the choice resolved (the setting before the environment), with
// the model, the key and the streaming mode it resolved.
func TestChooseOrder(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Text: "记住了。", Repeat: -1})
	defer srv.Close()
	const elsewhere = "http://127.0.0.1:9" // discard: a request there fails
	tests := []struct {
		name      string
		provider  string // the setting
		model     string
		baseURL   string // the setting
		env       map[string]string
		wantName  string
		wantWhy   string
		wantModel string
		wantKey   string
		stream    bool
	}{
		{name: "nothing set", wantName: provider.Offline, wantWhy: "no model key is set"},
		{name: "auto is nothing set", provider: " Auto ", wantName: provider.Offline, wantWhy: "no model key is set"},
		{name: "offline setting beats keys", provider: "offline", env: map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, wantName: provider.Offline, wantWhy: "provider setting"},
		{name: "anthropic key", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": srv.URL},
			wantName: provider.Anthropic, wantWhy: "ANTHROPIC_API_KEY is set", wantModel: anthropic.DefaultModel, wantKey: "sk-ant"},
		{name: "anthropic key beats openai key", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-oai", "ANTHROPIC_BASE_URL": srv.URL, "OPENAI_BASE_URL": elsewhere},
			wantName: provider.Anthropic, wantWhy: "ANTHROPIC_API_KEY is set", wantModel: anthropic.DefaultModel, wantKey: "sk-ant"},
		{name: "openai key", env: map[string]string{"OPENAI_API_KEY": "sk-oai", "OPENAI_BASE_URL": srv.URL + "/v1", "DREAM_STREAM": "1"},
			wantName: provider.OpenAI, wantWhy: "OPENAI_API_KEY is set", wantModel: openai.DefaultModel, wantKey: "sk-oai", stream: true},
		{name: "setting beats the anthropic key", provider: "OpenAI", model: "qwen3-coder", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-oai", "OPENAI_BASE_URL": srv.URL},
			wantName: provider.OpenAI, wantWhy: "provider setting", wantModel: "qwen3-coder", wantKey: "sk-oai"},
		{name: "base_url setting beats the environment", provider: "anthropic", model: "claude-haiku-4-5", baseURL: srv.URL, env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": elsewhere, "DREAM_STREAM": "TRUE"},
			wantName: provider.Anthropic, wantWhy: "provider setting", wantModel: "claude-haiku-4-5", wantKey: "sk-ant", stream: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.Provider, s.Model, s.BaseURL = tc.provider, tc.model, tc.baseURL
			c, err := provider.Choose(s, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != tc.wantName || c.Why != tc.wantWhy || c.Model != tc.wantModel {
				t.Fatalf("choice = %s %q (%s), want %s %q (%s)", c.Name, c.Model, c.Why, tc.wantName, tc.wantModel, tc.wantWhy)
			}
			if name, model := c.Names(); name != tc.wantName || model != tc.wantModel {
				t.Fatalf("Names() = %s %q", name, model)
			}
			if tc.wantName == provider.Offline {
				if c.Provider != nil {
					t.Fatalf("offline choice has a provider: %T", c.Provider)
				}
				return
			}
			before := len(srv.Requests())
			resp, err := c.Provider.Complete(context.Background(), &llm.Request{Model: c.Model, MaxTokens: 64, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "记住：部署前先跑 go vet"}}}}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text() != "记住了。" {
				t.Fatalf("answer %q", resp.Text())
			}
			reqs := srv.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("%d requests reached the server", len(reqs))
			}
			r := reqs[0]
			var body struct {
				Model string `json:"model"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			// The Anthropic SDK sends the key as x-api-key or as a bearer
			// token depending on its version; OpenAI's is a bearer token.
			key := r.Header.Get("X-Api-Key")
			if key == "" {
				key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			}
			if r.Protocol != tc.wantName || body.Model != tc.wantModel || key != tc.wantKey || r.Stream != tc.stream {
				t.Fatalf("request: protocol %s, model %q, key %q, stream %v", r.Protocol, body.Model, key, r.Stream)
			}
		})
	}
}

func TestChooseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, provider, want string
		env                  map[string]string
	}{
		{name: "unknown provider", provider: "gemini", want: `unknown provider "gemini": use anthropic, openai or offline`},
		{name: "anthropic without a key", provider: "anthropic", want: "anthropic provider: "},
		{name: "openai without a key", provider: "openai", want: "openai provider: "},
		{name: "a base URL that is not one", provider: "anthropic", env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "ftp://example.com"}, want: "anthropic provider: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.Provider = tc.provider
			c, err := provider.Choose(s, func(k string) string { return tc.env[k] })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Choose = %+v, %v; want an error with %q", c, err, tc.want)
			}
		})
	}
}

// A Choice is the hostcfg.Backend of the front ends: the zero Choice (what
// `dream status` passes) dreams offline, a model choice gets the agent, and
// on nanobot's host the history dream, each with the settings it is given.
func TestChoiceIsTheBackend(t *testing.T) {
	var _ hostcfg.Backend = provider.Choice{}
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir, s.MaxTurns = "state", 7
	if r, ok := (provider.Choice{}).Runner(s).(*runner.Offline); !ok || r.StateDir != "state" {
		t.Fatalf("the zero Choice's runner is %#v, want the offline engine", (provider.Choice{}).Runner(s))
	}
	s.Provider = "anthropic"
	c, err := provider.Choose(s, func(k string) string { return map[string]string{"ANTHROPIC_API_KEY": "k"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := c.Runner(s).(*runner.Agent); !ok || r.Provider != c.Provider || r.Model != c.Model || r.MaxTurns != 7 {
		t.Fatalf("the model choice's runner is %#v", c.Runner(s))
	}
	s.Host = nanobot.HostName
	if r, ok := c.Runner(s).(*runner.HistoryDream); !ok || r.Provider != c.Provider || r.MaxTurns != 7 {
		t.Fatalf("on nanobot the model choice's runner is %#v", c.Runner(s))
	}
}
