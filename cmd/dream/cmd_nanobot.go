package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/historydream"
)

// hostNanobot is the --host value of nanobot's flow.
const hostNanobot = "nanobot"

// nanobotWorkspace maps the memory location of --host nanobot onto the
// workspace, which is what nanobot's flow dreams over (SOUL.md and USER.md
// sit beside memory/). --memory-dir WORKSPACE/memory (or the workspace
// itself) names it; otherwise the workspace containing the current
// directory; otherwise the host layout's default workspace.
func (a *app) nanobotWorkspace(mem string, fromFlag bool) string {
	if fromFlag {
		if filepath.Base(filepath.Clean(mem)) == "memory" {
			return filepath.Dir(filepath.Clean(mem))
		}
		return mem
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if dream.IsNanobotWorkspace(dir) {
				return dir
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return filepath.Dir(filepath.Clean(mem))
}

// nanobotRunner is the history dream's runner; it needs a model.
func nanobotRunner(choice dream.Choice, s dream.Settings) (dream.Runner, error) {
	if choice.Provider == nil {
		return nil, usagef("the nanobot history dream needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or --provider (%s)", choice.Why)
	}
	return &dream.HistoryDreamRunner{Provider: choice.Provider, Model: choice.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens}, nil
}

// finishNanobotMaybe commits and compacts after a landed `dream maybe
// --host nanobot`, as nanobot's periodic dream does.
func (a *app) finishNanobotMaybe(d *dream.Dreamer, rep dream.Report) {
	if a.loaded.Settings.Host != hostNanobot || rep.Status != dream.StatusCompleted {
		return
	}
	if _, _, err := dream.FinishNanobotDream(a.ctx, dream.NanobotWorkspace(d), historydream.CommitPeriodic); err != nil {
		fmt.Fprintf(a.stderr, "dream: %v\n", err)
	}
}

// runNanobot is `dream run --host nanobot`: the history dream over the
// workspace, then nanobot's git-store commit and history compaction.
func runNanobot(a *app, review bool) int {
	d, view, code, ok := a.dreamerWithProvider()
	if !ok {
		return code
	}
	defer d.Close()
	rep, err := dream.RunNanobot(a.ctx, d, dream.RunOptions{Review: review || a.loaded.Settings.Review}, historydream.CommitManual)
	view.done()
	if a.jsonOut {
		a.printJSON(rep)
		if err != nil {
			return a.exitFor(err)
		}
		return exitOK
	}
	printReport(a.stdout, rep.Report)
	if rep.Status == dream.StatusCompleted {
		fmt.Fprintf(a.stdout, "history: %d entries consumed, dream cursor %d", rep.HistoryEntriesConsumed, rep.DreamCursor)
		if rep.NanobotCommit != "" {
			fmt.Fprintf(a.stdout, ", nanobot git store commit %.8s", rep.NanobotCommit)
		}
		fmt.Fprintln(a.stdout)
	}
	if err != nil {
		return a.exitFor(err)
	}
	return exitOK
}

// exitFor maps a failed run to its exit code, as finishRun does.
func (a *app) exitFor(err error) int {
	if errors.Is(err, dream.ErrLockHeld) {
		if a.jsonOut {
			return exitHeld
		}
		return a.fail(err)
	}
	return exitFailed
}
