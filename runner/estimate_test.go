package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/eval"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/llm/openai"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// TestEstimateAgainstActual: on eval scenarios of each kind (a clean
// memory, leads to act on, a large index, Chinese notes, a decoy), the
// estimate of a model dream's input and output tokens is within 25% of
// what the dream then spends against the fake server playing a model
// that consolidates as the task asks, through both providers' adapters.
// bench/estimate.sh runs every scenario and prints the table.
func TestEstimateAgainstActual(t *testing.T) {
	all, err := eval.LoadAll(filepath.Join("..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"clean-memory": true, "duplicate-across-files": true, "index-over-30kb": true, "notes-chinese": true, "decoy-hotfix-procedure": true, "mixed-defects": true}
	var scenarios []eval.Scenario
	for _, s := range all {
		if want[s.Name] {
			scenarios = append(scenarios, s)
		}
	}
	if len(scenarios) != len(want) {
		t.Fatalf("found %d of the %d scenarios", len(scenarios), len(want))
	}
	for _, protocol := range []string{llmtest.ProtocolAnthropic, llmtest.ProtocolOpenAI} {
		none := func(context.Context, eval.Scenario, eval.Workspace) (eval.Outcome, error) { return eval.Outcome{}, nil }
		_, err := eval.Run(context.Background(), scenarios, eval.Engine{Offline: none, Model: func(ctx context.Context, sc eval.Scenario, ws eval.Workspace) (eval.Outcome, error) {
			srv := llmtest.NewServer(llmtest.Consolidator())
			defer srv.Close()
			var p llm.Provider
			var model string
			if protocol == llmtest.ProtocolAnthropic {
				model = anthropic.DefaultModel
				p, err = anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL, Model: model, MaxRetries: -1})
			} else {
				model = openai.DefaultModel
				p, err = openai.New(openai.Options{APIKey: "k", BaseURL: srv.URL + "/v1", Model: model, MaxRetries: -1})
			}
			if err != nil {
				t.Fatal(err)
			}
			state := t.TempDir()
			now := sc.Now
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.StateDir, s.Host = state, sc.Host
			r := runner.For(p, model, s).(*runner.Agent)
			r.Now = func() time.Time { return now }
			d, err := dream.New(dream.Config{MemoryDir: ws.MemoryDir, SessionsDir: ws.SessionsDir, RepoDir: ws.RepoDir, StateDir: state, Settings: s.Dream,
				Runner: r, Provider: protocol, Model: model, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			o, err := d.Estimate(ctx)
			if err != nil || o.Estimate == nil {
				t.Fatalf("%s: Estimate = %+v, %v", sc.Name, o, err)
			}
			rep, err := d.Run(ctx, dream.RunOptions{DryRun: true})
			if err != nil {
				t.Fatalf("%s: %v", sc.Name, err)
			}
			e, u := o.Estimate.Usage, rep.Usage
			in := func(u llm.Usage) float64 {
				return float64(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens)
			}
			ri, ro := in(e)/in(u), float64(e.OutputTokens)/float64(u.OutputTokens)
			t.Logf("%-24s %-9s requests %d/%d input %.2f output %.2f", sc.Name, protocol, o.Estimate.Requests, len(srv.Requests()), ri, ro)
			if ri < 0.75 || ri > 1.25 || ro < 0.75 || ro > 1.25 {
				t.Errorf("%s (%s): estimate/actual input %.2f, output %.2f: want within 25%%", sc.Name, protocol, ri, ro)
			}
			if rep.Cost == nil || rep.Estimate == nil {
				t.Errorf("%s: the report carries no estimate or cost", sc.Name)
			}
			return eval.Outcome{Usage: u}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
}
