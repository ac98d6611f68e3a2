package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	nanobotpkg "github.com/dreamkit/dream/internal/nanobot"
)

// nanobot's flow. Its memory is a workspace, not a folder of notes:
// SOUL.md and USER.md at the root, memory/MEMORY.md and the append-only
// memory/history.jsonl below it, skills/ beside them (HKUDS/nanobot,
// nanobot/agent/memory.py). A dream consumes the history entries no dream
// has read yet (memory/.dream_cursor) into the three files. The Dreamer's
// memory dir is the workspace, so that the lock, the journal, the audit
// history and `dream undo` cover all three files and the cursor together.

// NanobotReport is a dream's Report with the history fields
// (`dream run --host nanobot --json`).
type NanobotReport struct {
	Report
	// HistoryEntriesConsumed counts the entries the landed dream consumed.
	HistoryEntriesConsumed int `json:"history_entries_consumed"`
	// DreamCursor is the workspace's dream cursor after the run.
	DreamCursor int64 `json:"dream_cursor"`
	// NanobotCommit is the commit in nanobot's own git store, if any.
	NanobotCommit string `json:"nanobot_commit,omitempty"`
	// HistoryCompacted is how many entries compaction dropped afterwards.
	HistoryCompacted int `json:"history_compacted,omitempty"`
}

// NanobotWorkspace returns the workspace of a Dreamer built for nanobot's
// flow: its memory dir.
func NanobotWorkspace(d *Dreamer) string { return d.cfg.MemoryDir }

// IsNanobotWorkspace reports whether dir looks like a nanobot workspace: a
// memory/ directory beside SOUL.md, USER.md or nanobot's .nanobot marker, or
// holding history.jsonl or MEMORY.md.
func IsNanobotWorkspace(dir string) bool {
	mem := filepath.Join(dir, "memory")
	if fi, err := os.Stat(mem); err != nil || !fi.IsDir() {
		return false
	}
	for _, p := range []string{filepath.Join(mem, nanobotpkg.LogName), filepath.Join(mem, "MEMORY.md"), filepath.Join(dir, "SOUL.md"), filepath.Join(dir, "USER.md"), filepath.Join(dir, ".nanobot")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// RunNanobot runs one history dream now with d (whose memory dir is the
// workspace and whose runner is a runner.HistoryDream) and, when it landed,
// finishes it as nanobot does: a commit in nanobot's git store and a history
// compaction. prefix is the commit subject (nanobotpkg.CommitManual or
// CommitPeriodic).
func RunNanobot(ctx context.Context, d *Dreamer, o RunOptions, prefix string) (NanobotReport, error) {
	ws := d.cfg.MemoryDir
	log := nanobotpkg.OpenLog(filepath.Join(ws, "memory"), nanobotpkg.LogOptions{})
	before, _ := log.DreamCursor()
	// A Dreamer built for nanobot's flow finishes the dream itself (its
	// AfterLand), with this run's prefix.
	run := &nanobotRun{prefix: prefix}
	rep, err := d.Run(context.WithValue(ctx, nanobotRunKey{}, run), o)
	nr := NanobotReport{Report: rep, DreamCursor: before}
	if after, cerr := log.DreamCursor(); cerr == nil {
		nr.DreamCursor = after
	}
	if err != nil || rep.Status != StatusCompleted {
		return nr, err
	}
	if nr.DreamCursor > before {
		res, rerr := log.After(ctx, before, nanobotpkg.Query{})
		if rerr == nil {
			for _, e := range res.Entries {
				if e.Cursor <= nr.DreamCursor {
					nr.HistoryEntriesConsumed++
				}
			}
		}
	}
	if run.finished {
		nr.NanobotCommit, nr.HistoryCompacted = run.commit, run.compacted
		return nr, nil
	}
	commit, compacted, ferr := FinishNanobotDream(ctx, ws, prefix)
	nr.NanobotCommit, nr.HistoryCompacted = commit, compacted
	if ferr != nil {
		d.cfg.Logf("dream: %v", ferr)
	}
	return nr, nil
}

// FinishNanobotDream is what follows a landed nanobot dream: the change is
// committed to nanobot's own git store (when the workspace has one), with a
// message built from the real diff, and history.jsonl is compacted to
// nanobot's 1,000 entries, never past the dream cursor. A host that runs
// dreams through MaybeStart calls it from Config.OnDone for completed
// reports; a Dreamer whose Config came from ConfigForProject does it
// itself.
func FinishNanobotDream(ctx context.Context, workspace, prefix string) (commit string, compacted int, err error) {
	commit, gerr := nanobotpkg.CommitGitStore(ctx, workspace, prefix)
	if gerr != nil {
		gerr = fmt.Errorf("committing to nanobot's git store: %w", gerr)
	}
	rep, cerr := nanobotpkg.OpenLog(filepath.Join(workspace, "memory"), nanobotpkg.LogOptions{}).Compact(ctx, nanobotpkg.DefaultMaxEntries)
	if cerr != nil {
		cerr = fmt.Errorf("compacting the history: %w", cerr)
	}
	return commit, rep.Before - rep.After, errors.Join(gerr, cerr)
}
