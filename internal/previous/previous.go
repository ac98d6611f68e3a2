// Package previous writes the record of the dream before the one starting,
// which a memory dream's task shows its model (dream.Job.Previous): what
// that dream changed, what it staged for review and why, or that it left
// nothing; never its transcript, never an older dream.
package previous

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/task"
)

// previousBytes bounds the diff a previous dream's record shows the next
// one: enough for a dream's usual few edits, never a flood of its context.
const previousBytes = 12 << 10

// Record is the record of the dream before the one starting on memoryDir,
// for its task (dream.Job.Previous): what that dream changed (its files and diff,
// from the audit history), what it staged for review and why (from its
// parked staging), or that it left nothing. The previous dream is the
// newest finished task of this memory; when the registry has pruned it,
// the newest landed or staged dream. It is the dream's record only (never
// its transcript, whose summaries would have the next dream consolidate
// its own consolidation) and one level deep: it holds nothing of the
// dreams before it. "" when there was none or it cannot be read (a dream
// goes on without it).
func Record(ctx context.Context, hist *audit.History, stateDir, taskDir, memoryDir string) string {
	var landed *audit.Entry
	undone := false
	entries, _ := hist.Log(ctx, 10)
	for i, e := range entries {
		if e.Kind == audit.KindDream || e.Kind == audit.KindApply {
			landed = &entries[i]
			// An undo recorded since (newer, so listed before it) took
			// its changes back: the next dream must not redo them.
			undone = slices.ContainsFunc(entries[:i], func(u audit.Entry) bool { return u.Kind == audit.KindUndo && u.Undoes == e.ID })
			break
		}
	}
	var staged *journal.Info
	if parked, _ := journal.ListParked(stateDir, memoryDir); len(parked) > 0 {
		staged = &parked[len(parked)-1]
	}
	prev, known := lastTask(taskDir, memoryDir)
	switch {
	case known && landed != nil && landed.ID == prev.ID, !known && landed != nil && (staged == nil || landed.StartedAt.After(staged.CreatedAt)):
		var b strings.Builder
		then := ""
		if undone {
			then = ", and the user then undid them (dream undo): the memory no longer holds them, by the user's choice; do not make them again"
		}
		fmt.Fprintf(&b, "Dream %s (%s) landed these changes%s:\n", landed.ID, landed.StartedAt.UTC().Format(time.RFC3339), then)
		for _, f := range landed.Files {
			fmt.Fprintf(&b, "- %s %s (+%d -%d)\n", f.Status, f.Path, f.Added, f.Removed)
		}
		return b.String() + fencedDiff(landed.Diff)
	case staged != nil && (!known || staged.ID == prev.ID):
		t, err := journal.Load(stateDir, memoryDir, staged.ID)
		if err != nil {
			return ""
		}
		cs, err := t.Changes()
		if err != nil {
			return ""
		}
		diff, _ := t.Diff()
		var b strings.Builder
		fmt.Fprintf(&b, "Dream %s (%s) was staged for review and has not landed (%s). Its staged changes:\n", t.ID(), staged.CreatedAt.UTC().Format(time.RFC3339), orNone(t.ParkReason()))
		for _, c := range cs {
			fmt.Fprintf(&b, "- %s %s (+%d -%d)\n", c.Kind, c.Path, c.Added, c.Removed)
		}
		return b.String() + fencedDiff(diff)
	case known:
		why := ""
		if prev.Error != "" {
			why = ": " + prev.Error
		}
		return fmt.Sprintf("Dream %s (%s) ended %s and left no change in the memory%s.\n", prev.ID, prev.StartedAt.UTC().Format(time.RFC3339), prev.Status, why)
	}
	return ""
}

// lastTask is the newest finished memory dream of memoryDir in the task
// registry under taskDir.
func lastTask(taskDir, memoryDir string) (task.Entry, bool) {
	reg, err := task.Open(taskDir)
	if err != nil {
		return task.Entry{}, false
	}
	list, _ := reg.List()
	for _, e := range list {
		if e.Status != task.StatusRunning && e.Job == "" && filepath.Clean(e.MemoryDir) == memoryDir {
			return e, true
		}
	}
	return task.Entry{}, false
}

// fencedDiff is a diff in a fenced block, cut at previousBytes on a line
// boundary with what was left out said.
func fencedDiff(diff string) string {
	if diff == "" {
		return ""
	}
	cut := ""
	if len(diff) > previousBytes {
		end := strings.LastIndexByte(diff[:previousBytes], '\n') + 1
		cut = fmt.Sprintf("(%d more bytes of the diff left out: read the files for the rest)\n", len(diff)-end)
		diff = diff[:end]
	}
	return "\n```diff\n" + strings.TrimRight(diff, "\n") + "\n```\n" + cut
}

func orNone(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}
