package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/history"
	"github.com/dreamkit/dream/internal/historydream"
)

// hostNanobot is the --host value of nanobot's flow.
const hostNanobot = "nanobot"

// isNanobot reports whether this invocation is on a nanobot workspace:
// --host nanobot, or no host and no memory dir given and nanobot's layout
// is the one detected.
func (a *app) isNanobot() bool {
	s := a.loaded.Settings
	if s.Host == hostNanobot {
		return true
	}
	if s.Host != "" || s.MemoryDir != "" {
		return false
	}
	l, err := a.resolveLayout("", "", s.Repo)
	return err == nil && l != nil && l.Host == hostNanobot
}

// nanobotWorkspace maps the memory location of a nanobot invocation onto
// the workspace, which is what nanobot's flow dreams over (SOUL.md and
// USER.md sit beside memory/). --memory-dir WORKSPACE/memory (or the
// workspace itself) names it; otherwise the workspace containing the
// current directory; otherwise the host layout's workspace.
func (a *app) nanobotWorkspace(mem string, fromFlag bool) string {
	clean := filepath.Clean(mem)
	if !fromFlag {
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
	}
	if filepath.Base(clean) == "memory" && !dream.IsNanobotWorkspace(clean) {
		return filepath.Dir(clean)
	}
	return clean
}

// nanobotRunner is the history dream's runner. Without a model, the
// offline engine's mechanical hygiene runs on the workspace's memory files
// instead, and the history waits for a model dream.
func nanobotRunner(choice dream.Choice, s dream.Settings) dream.Runner {
	if choice.Provider == nil {
		return dream.RunnerFor(choice, s)
	}
	return &dream.HistoryDreamRunner{Provider: choice.Provider, Model: choice.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens}
}

// finishNanobotMaybe commits and compacts after a landed `dream maybe
// --host nanobot`, as nanobot's periodic dream does.
func (a *app) finishNanobotMaybe(d *dream.Dreamer, rep dream.Report) {
	if !a.isNanobot() || rep.Status != dream.StatusCompleted {
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

// nanobotCheckEdit widens the layout's edit guard for nanobot's flow by
// what the history dream itself writes: skills/ (nanobot's Dream may create
// and edit skills, memory.py build_dream_tools) and memory/.dream_cursor,
// which only the runner writes (the model's tools refuse it) and only
// forward, to a non-negative integer.
func (a *app) nanobotCheckEdit(inner func(rel string, before, after []byte) error) func(rel string, before, after []byte) error {
	if inner == nil || !a.isNanobot() {
		return inner
	}
	return func(rel string, before, after []byte) error {
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "memory/"+history.DreamCursorName:
			next, err := strconv.ParseInt(strings.TrimSpace(string(after)), 10, 64)
			if after == nil || err != nil || next < 0 {
				return fmt.Errorf("%s: the dream cursor must stay a non-negative integer", rel)
			}
			if prev, err := strconv.ParseInt(strings.TrimSpace(string(before)), 10, 64); before != nil && err == nil && next < prev {
				return fmt.Errorf("%s: the dream cursor may only move forward (%d to %d)", rel, prev, next)
			}
			return nil
		case historydream.Writable(rel) && strings.HasPrefix(rel, historydream.SkillsDir+"/"):
			return nil
		}
		return inner(rel, before, after)
	}
}
