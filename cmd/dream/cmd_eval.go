package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/eval"
	"github.com/dreamkit/dream/llm"
)

func cmdEval(a *app, args []string) error {
	var dir string
	if _, err := a.standardCommand("eval", args, func(fs *flag.FlagSet) {
		fs.StringVar(&dir, "dir", filepath.Join("testdata", "eval"), "the scenarios directory")
	}); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("no scenarios at %s: run from a dream checkout or pass --dir", dir)
	}
	scenarios, err := eval.LoadAll(dir)
	if err != nil {
		return err
	}
	choice, err := dream.ChooseProvider(a.loaded.Settings, a.getenv)
	if err != nil {
		return usagef("%v", err)
	}
	if !a.jsonOut {
		engine := "offline engine"
		if choice.Provider != nil {
			engine = choice.Name + " " + choice.Model
		}
		fmt.Fprintf(a.stderr, "dream eval: %d scenario(s) with the %s\n", len(scenarios), engine)
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
		var runner dream.Runner = &dream.OfflineRunner{Now: clock, Host: sc.Host}
		if choice.Provider != nil {
			runner = &dream.AgentRunner{Provider: choice.Provider, Model: choice.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, Now: clock, Host: sc.Host}
		}
		cfg := s
		d, err := dream.New(dream.Config{MemoryDir: ws.MemoryDir, SessionsDir: ws.SessionsDir, RepoDir: ws.RepoDir, StateDir: stateDir, Settings: cfg, Runner: runner, Provider: choice.Name, Model: choice.Model})
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
	}
	for _, sc := range scores {
		if sc.Err != "" || sc.ProbesRetained < sc.ProbesTotal || sc.Regressions > 0 || !sc.OutsideUntouched {
			return reported(exitFailed, fmt.Errorf("eval: scenario %s regressed", sc.Scenario))
		}
	}
	return nil
}
