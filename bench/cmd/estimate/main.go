// Command estimate compares what dream estimates a model dream will cost
// with what the dream then spends, on every scenario of the eval corpus,
// against the project's fake server (llm/llmtest) playing a model that
// consolidates as the task asks (llmtest.Consolidator), through the real
// Anthropic and OpenAI adapters. The fake counts a request's tokens as its
// JSON bytes over four, deterministically; the estimate counts what the
// dream will send with the cl100k_base tokenizer and plays its requests
// (runner.Agent.Estimate). It prints one row per scenario and protocol and
// the worst ratios; -max-error fails the run past a bound.
//
//	go run ./bench/cmd/estimate [-corpus testdata/eval] [-max-error 0.25]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/eval"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/llm/openai"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
	"github.com/dreamkit/dream/spend"
)

func main() {
	corpus := flag.String("corpus", "testdata/eval", "the eval scenarios")
	maxErr := flag.Float64("max-error", 0, "fail when an estimate is off by more than this share (0: report only)")
	flag.Parse()
	worst, err := run(context.Background(), os.Stdout, *corpus)
	if err != nil {
		fmt.Fprintln(os.Stderr, "estimate:", err)
		os.Exit(1)
	}
	if *maxErr > 0 && worst > *maxErr {
		fmt.Fprintf(os.Stderr, "estimate: worst error %.1f%% is over %.1f%%\n", worst*100, *maxErr*100)
		os.Exit(1)
	}
}

// row is one dream: its estimate and what it spent.
type row struct {
	scenario, protocol string
	est                spend.Estimate
	got                llm.Usage
	requests           int
}

func run(ctx context.Context, w io.Writer, corpus string) (float64, error) {
	scenarios, err := eval.LoadAll(corpus)
	if err != nil {
		return 0, err
	}
	var rows []row
	for _, protocol := range []string{llmtest.ProtocolAnthropic, llmtest.ProtocolOpenAI} {
		// One dream each, the model runner's own offline pass included,
		// as a dream runs outside eval.
		none := func(context.Context, eval.Scenario, eval.Workspace) (eval.Outcome, error) { return eval.Outcome{}, nil }
		_, err := eval.Run(ctx, scenarios, eval.Engine{Offline: none, Model: func(ctx context.Context, sc eval.Scenario, ws eval.Workspace) (eval.Outcome, error) {
			r, err := dreamOnce(ctx, protocol, sc, ws)
			if err != nil {
				return eval.Outcome{}, fmt.Errorf("%s (%s): %w", sc.Name, protocol, err)
			}
			rows = append(rows, r)
			return eval.Outcome{Usage: r.got}, nil
		}})
		if err != nil {
			return 0, err
		}
	}
	fmt.Fprintf(w, "%-34s %-9s %5s %9s %9s %6s %7s %7s %6s %8s %8s\n", "scenario", "protocol", "parts", "req est", "req got", "", "in est", "in got", "ratio", "out est", "out got")
	worst := 0.0
	var sumIn, sumInGot, sumOut, sumOutGot int64
	for _, r := range rows {
		inEst := r.est.Usage.InputTokens + r.est.Usage.CacheReadInputTokens + r.est.Usage.CacheCreationInputTokens
		inGot := r.got.InputTokens + r.got.CacheReadInputTokens + r.got.CacheCreationInputTokens
		ri, ro := ratio(inEst, inGot), ratio(r.est.Usage.OutputTokens, r.got.OutputTokens)
		worst = max(worst, math.Abs(ri-1), math.Abs(ro-1))
		sumIn, sumInGot, sumOut, sumOutGot = sumIn+inEst, sumInGot+inGot, sumOut+r.est.Usage.OutputTokens, sumOutGot+r.got.OutputTokens
		fmt.Fprintf(w, "%-34s %-9s %5d %9d %9d %6s %7d %7d %6.2f %8d %8d %6.2f\n", r.scenario, r.protocol, r.est.Parts, r.est.Requests, r.requests, "",
			inEst, inGot, ri, r.est.Usage.OutputTokens, r.got.OutputTokens, ro)
	}
	fmt.Fprintf(w, "\n%d dreams; input estimate/actual overall %.3f, output %.3f; worst error %.1f%%\n", len(rows), ratio(sumIn, sumInGot), ratio(sumOut, sumOutGot), worst*100)
	return worst, nil
}

func ratio(est, got int64) float64 {
	if got == 0 {
		if est == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return float64(est) / float64(got)
}

// dreamOnce estimates and runs one dream on ws against a fresh fake
// server.
func dreamOnce(ctx context.Context, protocol string, sc eval.Scenario, ws eval.Workspace) (row, error) {
	srv := llmtest.NewServer(llmtest.Consolidator())
	defer srv.Close()
	var p llm.Provider
	var model string
	var err error
	if protocol == llmtest.ProtocolAnthropic {
		model = anthropic.DefaultModel
		p, err = anthropic.New(anthropic.Options{APIKey: "test", BaseURL: srv.URL, Model: model, MaxRetries: -1})
	} else {
		model = openai.DefaultModel
		p, err = openai.New(openai.Options{APIKey: "test", BaseURL: srv.URL + "/v1", Model: model, MaxRetries: -1})
	}
	if err != nil {
		return row{}, err
	}
	state, err := os.MkdirTemp("", "dream-estimate-state-")
	if err != nil {
		return row{}, err
	}
	defer os.RemoveAll(state)
	now := sc.Now
	if now.IsZero() {
		now = time.Now()
	}
	r := runner.For(p, model, settings.Settings{Dream: settings.DreamDefaults(), StateDir: state, Host: sc.Host})
	if a, ok := r.(*runner.Agent); ok {
		a.Now = func() time.Time { return now }
	}
	d, err := dream.New(dream.Config{MemoryDir: ws.MemoryDir, SessionsDir: ws.SessionsDir, RepoDir: ws.RepoDir, StateDir: state, Host: sc.Host, Settings: settings.DreamDefaults(),
		Runner: r, Provider: protocol, Model: model, Now: func() time.Time { return now }})
	if err != nil {
		return row{}, err
	}
	defer d.Close()
	o, err := d.Estimate(ctx)
	if err != nil {
		return row{}, err
	}
	if o.Estimate == nil {
		return row{}, fmt.Errorf("no estimate: %s", o.Refusal)
	}
	rep, err := d.Run(ctx, dream.RunOptions{DryRun: true})
	if err != nil {
		return row{}, fmt.Errorf("%w (report: %s)", err, rep.Error)
	}
	return row{scenario: sc.Name, protocol: protocol, est: *o.Estimate, got: rep.Usage, requests: len(srv.Requests())}, nil
}
