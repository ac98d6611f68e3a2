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

// runNanobot is `dream run --host nanobot`: the history dream over the
// workspace, then nanobot's git-store commit and history compaction.
func runNanobot(a *app, review bool) int {
	choice, err := dream.ChooseProvider(a.loaded.Settings, a.getenv)
	if err != nil {
		return a.fail(usagef("%v", err))
	}
	if choice.Provider == nil {
		return a.fail(usagef("the nanobot history dream needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or --provider (%s)", choice.Why))
	}
	view := newProgressView(a.stderr, isTerminal(a.stderr), a.jsonOut && !isTerminal(a.stderr))
	s := a.loaded.Settings
	runner := &dream.HistoryDreamRunner{Provider: choice.Provider, Model: choice.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens}
	d, err := a.dreamer(runner, choice, view.on)
	if err != nil {
		return a.fail(err)
	}
	defer d.Close()
	rep, err := dream.RunNanobot(a.ctx, d, dream.RunOptions{Review: review || s.Review}, historydream.CommitManual)
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
