package provider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/settings"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestConsent: in the user's shell an exported key is given to dream; in
// an inherited environment (a hook, the MCP server, the daemon) it is
// not, until dream's own settings name a provider or a model; a base URL
// found there is used only with its own key.
func TestConsent(t *testing.T) {
	key := map[string]string{"ANTHROPIC_API_KEY": "sk-agent", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/gateway"}
	for _, tc := range []struct {
		name      string
		env       map[string]string
		provider  string
		model     string
		inherited bool
		want      string
		why       string
		unused    string
	}{
		{name: "shell, key exported", env: key, want: "anthropic", why: "ANTHROPIC_API_KEY is set"},
		{name: "hook, key inherited", env: key, inherited: true, want: "offline", why: "does not give it to dream", unused: "dream init claude --model-dreams"},
		{name: "hook, provider setting", env: key, provider: "anthropic", inherited: true, want: "anthropic", why: "provider setting"},
		{name: "hook, model setting", env: key, model: "claude-haiku-4-5", inherited: true, want: "anthropic", why: "a model is set"},
		{name: "hook, base URL without its key", env: map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "OPENAI_API_KEY": "sk-x"}, provider: "anthropic", inherited: true, want: "offline", why: "inherited without ANTHROPIC_API_KEY", unused: "OPENAI_API_KEY"},
		{name: "shell, offline chosen, key unused", env: key, provider: "offline", want: "offline", unused: "provider = \"anthropic\""},
		{name: "no key", env: map[string]string{}, inherited: true, want: "offline", why: "no model key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.StateDir, s.Provider, s.Model = t.TempDir(), tc.provider, tc.model
			c, err := provider.ChooseWith(s, envOf(tc.env), provider.Options{Inherited: tc.inherited, Agent: "claude"})
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != tc.want || !strings.Contains(c.Why, tc.why) {
				t.Errorf("choice %s (%s), want %s (%s)", c.Name, c.Why, tc.want, tc.why)
			}
			if (c.Provider == nil) != (tc.want == "offline") {
				t.Errorf("provider %v for %s", c.Provider, c.Name)
			}
			var u []string
			for _, x := range c.Unused {
				u = append(u, x.Var+": "+x.Enable)
			}
			if got := strings.Join(u, "; "); tc.unused == "" && got != "" && tc.want != "offline" || !strings.Contains(got, tc.unused) {
				t.Errorf("unused %q, want it to mention %q", got, tc.unused)
			}
			if strings.Contains(c.Why+strings.Join(u, ""), "sk-") {
				t.Errorf("a key's value is shown: %q %q", c.Why, u)
			}
		})
	}
}

// TestModelRejectedOnce: an endpoint that says it does not serve the
// model is asked once; the rejection is kept in the state dir, the next
// choice with the same provider, base URL and model is offline and says
// why, and a changed model is tried again.
func TestModelRejectedOnce(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Status: 404, Text: "model: claude-sonnet-4-6 not found"})
	defer srv.Close()
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir, s.Provider = t.TempDir(), "anthropic"
	env := envOf(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL})
	c, err := provider.Choose(s, env)
	if err != nil || c.Provider == nil {
		t.Fatalf("Choose = %+v, %v", c, err)
	}
	req := &llm.Request{Model: c.Model, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}}}
	_, err = c.Provider.Complete(context.Background(), req)
	if !provider.IsModelRejection(err) {
		t.Fatalf("Complete = %v, want the 404", err)
	}
	// The same process does not ask again.
	if _, err := c.Provider.Complete(context.Background(), req); err == nil || len(srv.Requests()) != 1 {
		t.Fatalf("second Complete = %v after %d requests; want refused without a request", err, len(srv.Requests()))
	}
	again, err := provider.Choose(s, env)
	if err != nil || again.Name != "offline" || again.Rejected == nil || !strings.Contains(again.Why, "until the provider, model or base_url setting changes") ||
		!strings.Contains(again.Why, "model-rejected.json") {
		t.Fatalf("Choose after the rejection = %s (%s), %v", again.Name, again.Why, err)
	}
	// The key is given (provider is set): it is not listed as unused with
	// a fix that is already in place.
	if len(again.Unused) != 0 {
		t.Errorf("after the rejection, unused keys %+v", again.Unused)
	}
	s.Model = "claude-haiku-4-5"
	if c, err := provider.Choose(s, env); err != nil || c.Name != "anthropic" {
		t.Fatalf("Choose with another model = %s, %v", c.Name, err)
	}
	if provider.IsModelRejection(errors.New("404")) || provider.IsModelRejection(&llm.APIError{Status: 400, Message: "max_tokens too large"}) {
		t.Error("an error that is not about the model counts as a rejection")
	}
}
