package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/eval"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/runner"
)

func cmdEval(a *app, args []string) error {
	var dir string
	if _, err := a.standardCommand("eval", args, func(fs *flag.FlagSet) {
		fs.StringVar(&dir, "dir", "", "score the scenarios in this `DIR` instead of the corpus built into dream (testdata/eval of a checkout)")
	}); err != nil {
		return err
	}
	corpus := dir
	if dir == "" {
		// The corpus travels in the binary, so an installed dream scores
		// the same scenarios as a checkout's tests do.
		tmp, err := os.MkdirTemp("", "dream-eval-corpus-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := eval.ExtractCorpus(tmp); err != nil {
			return err
		}
		corpus = tmp
	} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("no scenarios at %s: pass a directory of scenarios (one dir each, with a scenario.toml), or no --dir for the built-in corpus", dir)
	}
	scenarios, err := eval.LoadAll(corpus)
	if err != nil {
		return err
	}
	choice, err := provider.Choose(a.loaded.Settings, a.getenv)
	if err != nil {
		return usagef("%v", err)
	}
	if !a.jsonOut {
		engine := "offline engine"
		if choice.Provider != nil {
			engine = choice.Name + " " + choice.Model
		}
		from := "the corpus built into dream"
		if dir != "" {
			from = dir
		}
		fmt.Fprintf(a.stderr, "dream eval: %d scenario(s) from %s with the %s\n", len(scenarios), from, engine)
	}
	s := a.loaded.Settings
	dreamFn := func(ctx context.Context, sc eval.Scenario, ws eval.Workspace) (llm.Usage, error) {
		stateDir, err := os.MkdirTemp("", "dream-eval-state-")
		if err != nil {
			return llm.Usage{}, err
		}
		defer os.RemoveAll(stateDir)
		now := sc.Now
		if now.IsZero() {
			now = time.Now()
		}
		clock := func() time.Time { return now }
		var r dream.Runner = &runner.Offline{Now: clock, Host: sc.Host}
		if choice.Provider != nil {
			r = &runner.Agent{Provider: choice.Provider, Model: choice.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, MaxRequestTokens: s.MaxRequestTokens, Now: clock, Host: sc.Host}
		}
		cfg := s
		d, err := dream.New(dream.Config{MemoryDir: ws.MemoryDir, SessionsDir: ws.SessionsDir, RepoDir: ws.RepoDir, StateDir: stateDir, Settings: cfg, Runner: r, Provider: choice.Name, Model: choice.Model})
		if err != nil {
			return llm.Usage{}, err
		}
		defer d.Close()
		rep, err := d.StartManual(ctx)
		return rep.Usage, err
	}
	scores, err := eval.Run(a.ctx, scenarios, dreamFn)
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(scores)
	} else {
		fmt.Fprint(a.stdout, eval.Table(scores))
		fmt.Fprintf(a.stdout, "\ncolumns (fixed/total where there is a slash):\n%s", eval.Legend)
	}
	for _, sc := range scores {
		if sc.Err != "" || sc.ProbesRetained < sc.ProbesTotal || sc.Regressions > 0 || !sc.OutsideUntouched {
			return reported(exitFailed, fmt.Errorf("eval: scenario %s regressed", sc.Scenario))
		}
	}
	return nil
}
