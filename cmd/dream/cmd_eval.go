package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/eval"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// cmdEval scores dream on a corpus of scenarios: the offline pass and, when
// a provider is set, the model's dream after it.
func cmdEval(a *app, args []string) error {
	var dir string
	if _, err := a.standardCommand("eval", args, func(fs *flag.FlagSet) {
		fs.StringVar(&dir, "dir", "", "score the scenarios in this `DIR` instead of the corpus built into dream (testdata/eval of a checkout)")
	}); err != nil {
		return err
	}
	corpus, cleanup, err := evalScenarioDir(dir)
	if err != nil {
		return err
	}
	defer cleanup()
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
	// A scenario's workspace is thrown away: it never takes the team's etcd
	// lock nor pushes to the sync remote the user's settings name.
	s.Lock, s.SyncRemote = settings.LockFile, ""
	// The offline pass is a dream of its own, so that a model is scored on
	// what it did after it, never on the mechanical fixes.
	engine := eval.Engine{Offline: evalDreamWith(s, choice, func(clock func() time.Time, sc eval.Scenario) dream.Runner {
		return &runner.Offline{Now: clock, Host: sc.Host}
	})}
	if choice.Provider != nil {
		engine.Model = evalDreamWith(s, choice, func(clock func() time.Time, sc eval.Scenario) dream.Runner {
			return &runner.Agent{Provider: choice.Provider, Model: choice.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, MaxRequestTokens: s.MaxRequestTokens, Now: clock, Host: sc.Host, SkipOffline: true}
		})
	}
	scores, err := eval.Run(a.ctx, scenarios, engine)
	if err != nil {
		return err
	}
	return a.evalReport(scores, engine.Model != nil)
}

// evalScenarioDir names the directory of scenarios to score: dir when given,
// else the corpus built into the binary, extracted to a temporary dir that
// cleanup removes. The corpus travels in the binary, so an installed dream
// scores the same scenarios as a checkout's tests do.
func evalScenarioDir(dir string) (corpus string, cleanup func(), err error) {
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", nil, usagef("no scenarios at %s: pass a directory of scenarios (one dir each, with a scenario.toml), or no --dir for the built-in corpus", dir)
		}
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "dream-eval-corpus-")
	if err != nil {
		return "", nil, err
	}
	if err := eval.ExtractCorpus(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// evalDreamWith makes one dream on a scenario's workspace with the runner
// r makes, as `dream run` would: gates skipped, the lock, the guards, the
// commit. Both the offline pass and the model's pass go through it, so they
// are scored under the same rules.
func evalDreamWith(s settings.Settings, choice provider.Choice, r func(clock func() time.Time, sc eval.Scenario) dream.Runner) eval.DreamFunc {
	return func(ctx context.Context, sc eval.Scenario, ws eval.Workspace) (eval.Outcome, error) {
		stateDir, err := os.MkdirTemp("", "dream-eval-state-")
		if err != nil {
			return eval.Outcome{}, err
		}
		defer os.RemoveAll(stateDir)
		now := sc.Now
		if now.IsZero() {
			now = time.Now()
		}
		clock := func() time.Time { return now }
		d, err := dream.New(dream.Config{MemoryDir: ws.MemoryDir, SessionsDir: ws.SessionsDir, RepoDir: ws.RepoDir, StateDir: stateDir, Settings: s.Dream, Runner: r(clock, sc), Provider: choice.Name, Model: choice.Model})
		if err != nil {
			return eval.Outcome{}, err
		}
		defer d.Close()
		rep, err := d.Run(ctx, dream.RunOptions{})
		out := eval.Outcome{Usage: rep.Usage}
		switch {
		case rep.Status == dream.StatusStaged:
			out.Held = oneLine(rep.ParkReason, 300)
		case len(rep.ForReview) > 0:
			out.Held = "part of it: " + strings.Join(rep.ForReview, ", ")
		}
		return out, err
	}
}

// evalReport prints the scores (a table, or JSON) and turns any failed
// scenario into exit 1, so eval can gate a CI step.
func (a *app) evalReport(scores []eval.Score, withModel bool) error {
	if a.jsonOut {
		a.printJSON(scores)
	} else {
		fmt.Fprint(a.stdout, eval.Table(scores, withModel))
		fmt.Fprintf(a.stdout, "\ncolumns (fixed/total where there is a slash):\n%s", eval.Legend)
	}
	var failed []string
	for _, sc := range scores {
		if len(sc.Problems) > 0 {
			failed = append(failed, sc.Scenario+" ("+sc.Problems[0]+")")
		}
	}
	if len(failed) > 0 {
		// Said on stderr, the table (or the JSON) being the report.
		err := fmt.Errorf("eval: %d of %d scenario(s) failed: %s", len(failed), len(scores), strings.Join(failed, "; "))
		fmt.Fprintf(a.stderr, "dream: %v\n", err)
		return reported(exitFailed, err)
	}
	return nil
}
