package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
)

// isNanobot reports whether this invocation is on a nanobot workspace:
// --host nanobot, or no host and no memory dir given and nanobot's layout
// is the one detected.
func (a *app) isNanobot() bool {
	s := a.loaded.Settings
	if s.Host == nanobot.HostName {
		return true
	}
	if s.Host != "" || s.MemoryDir != "" {
		return false
	}
	l, err := a.resolveLayout("", "", s.Repo)
	return err == nil && l != nil && l.Host == nanobot.HostName
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
				if nanobot.IsWorkspace(dir) {
					return dir
				}
				if filepath.Dir(dir) == dir {
					break
				}
			}
		}
	}
	if filepath.Base(clean) == "memory" && !nanobot.IsWorkspace(clean) {
		return filepath.Dir(clean)
	}
	return clean
}

// runNanobot is `dream run --host nanobot`: the history dream over the
// workspace, then nanobot's git-store commit and history compaction.
func runNanobot(a *app, review bool) error {
	d, view, err := a.dreamerWithProvider()
	if err != nil {
		return err
	}
	defer d.Close()
	rep, err := nanobot.Run(a.ctx, d, dream.RunOptions{Review: review || a.loaded.Settings.Review}, nanobot.CommitManual)
	view.done()
	if errors.Is(err, dream.ErrLockHeld) {
		return err
	}
	if a.jsonOut {
		a.printJSON(rep)
		if err != nil {
			return reported(exitFailed, err)
		}
		return nil
	}
	printReport(a.stdout, rep.Report, a.hint)
	if rep.Status == dream.StatusCompleted {
		fmt.Fprintf(a.stdout, "history: %d entries consumed, dream cursor %d", rep.HistoryEntriesConsumed, rep.DreamCursor)
		if rep.NanobotCommit != "" {
			fmt.Fprintf(a.stdout, ", nanobot git store commit %.8s", rep.NanobotCommit)
		}
		fmt.Fprintln(a.stdout)
	}
	if err != nil {
		return reported(exitFailed, err)
	}
	return nil
}
