package nanobot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/host"
)

// HostName is the host name of nanobot's flow (`--host nanobot`).
const HostName = "nanobot"

// finishTimeout bounds the git commit and the history compaction that
// follow a landed dream.
const finishTimeout = 2 * time.Minute

// nanobot's flow. Its memory is a workspace, not a folder of notes:
// SOUL.md and USER.md at the root, memory/MEMORY.md and the append-only
// memory/history.jsonl below it, skills/ beside them (HKUDS/nanobot,
// nanobot/agent/memory.py). A dream consumes the history entries no dream
// has read yet (memory/.dream_cursor) into the three files. The Dreamer's
// memory dir is the workspace, so that the lock, the journal, the audit
// history and `dream undo` cover all three files and the cursor together.

// FlowReport is a dream's Report with the history fields
// (`dream run --host nanobot --json`).
type FlowReport struct {
	dream.Report
	// HistoryEntriesConsumed counts the entries the landed dream consumed.
	HistoryEntriesConsumed int `json:"history_entries_consumed"`
	// DreamCursor is the workspace's dream cursor after the run.
	DreamCursor int64 `json:"dream_cursor"`
	// NanobotCommit is the commit in nanobot's own git store, if any.
	NanobotCommit string `json:"nanobot_commit,omitempty"`
	// HistoryCompacted is how many entries compaction dropped afterwards.
	HistoryCompacted int `json:"history_compacted,omitempty"`
}

// IsWorkspace reports whether dir looks like a nanobot workspace: a
// memory/ directory beside SOUL.md, USER.md or nanobot's .nanobot marker, or
// holding history.jsonl or MEMORY.md.
func IsWorkspace(dir string) bool {
	mem := filepath.Join(dir, "memory")
	if fi, err := os.Stat(mem); err != nil || !fi.IsDir() {
		return false
	}
	for _, p := range []string{filepath.Join(mem, LogName), filepath.Join(mem, "MEMORY.md"), filepath.Join(dir, "SOUL.md"), filepath.Join(dir, "USER.md"), filepath.Join(dir, ".nanobot")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// Run runs one history dream now with d (whose memory dir is the
// workspace and whose runner is a runner.HistoryDream) and, when it landed,
// finishes it as nanobot does: a commit in nanobot's git store and a history
// compaction. prefix is the commit subject (CommitManual or
// CommitPeriodic).
func Run(ctx context.Context, d *dream.Dreamer, o dream.RunOptions, prefix string) (FlowReport, error) {
	ws := d.Config().MemoryDir
	log := OpenLog(filepath.Join(ws, "memory"), LogOptions{})
	before, _ := log.DreamCursor()
	// A Dreamer built for nanobot's flow finishes the dream itself (its
	// AfterLand), with this run's prefix.
	run := &flowRun{prefix: prefix}
	rep, err := d.Run(context.WithValue(ctx, runKey{}, run), o)
	nr := FlowReport{Report: rep, DreamCursor: before}
	if after, cerr := log.DreamCursor(); cerr == nil {
		nr.DreamCursor = after
	}
	if err != nil || rep.Status != dream.StatusCompleted {
		return nr, err
	}
	if nr.DreamCursor > before {
		res, rerr := log.After(ctx, before, Query{})
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
	commit, compacted, ferr := FinishDream(ctx, ws, prefix)
	nr.NanobotCommit, nr.HistoryCompacted = commit, compacted
	if ferr != nil {
		d.Config().Logf("dream: %v", ferr)
	}
	return nr, nil
}

// FinishDream is what follows a landed nanobot dream: the change is
// committed to nanobot's own git store (when the workspace has one), with a
// message built from the real diff, and history.jsonl is compacted to
// nanobot's 1,000 entries, never past the dream cursor. A Dreamer whose
// Config has AfterLand (hostcfg.For sets it for nanobot's flow) does it
// after each completed dream; Run does it for any other.
func FinishDream(ctx context.Context, workspace, prefix string) (commit string, compacted int, err error) {
	commit, gerr := CommitGitStore(ctx, workspace, prefix)
	if gerr != nil {
		gerr = fmt.Errorf("committing to nanobot's git store: %w", gerr)
	}
	rep, cerr := OpenLog(filepath.Join(workspace, "memory"), LogOptions{}).Compact(ctx, DefaultMaxEntries)
	if cerr != nil {
		cerr = fmt.Errorf("compacting the history: %w", cerr)
	}
	return commit, rep.Before - rep.After, errors.Join(gerr, cerr)
}

// CheckEdit widens the nanobot layout's edit guard by what the
// history dream itself writes: skills/ (nanobot's Dream may create and edit
// skills, memory.py build_dream_tools) and memory/.dream_cursor, which only
// the runner writes (the model's tools refuse it) and only forward, to a
// non-negative integer.
func CheckEdit(inner func(rel string, before, after []byte) error) func(rel string, before, after []byte) error {
	return func(rel string, before, after []byte) error {
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "memory/"+DreamCursorName:
			next, err := strconv.ParseInt(strings.TrimSpace(string(after)), 10, 64)
			if after == nil || err != nil || next < 0 {
				return fmt.Errorf("%s: the dream cursor must stay a non-negative integer", rel)
			}
			if prev, err := strconv.ParseInt(strings.TrimSpace(string(before)), 10, 64); before != nil && err == nil && next < prev {
				return fmt.Errorf("%s: the dream cursor may only move forward (%d to %d)", rel, prev, next)
			}
			return nil
		case Writable(rel) && strings.HasPrefix(rel, SkillsDir+"/"):
			return nil
		}
		return inner(rel, before, after)
	}
}

// flowRun is what Run and the Config's AfterLand share through
// the run's context: the commit subject for nanobot's git store, and what
// the follow-up did.
type flowRun struct {
	prefix    string
	finished  bool
	commit    string
	compacted int
}

type runKey struct{}

// AfterLand is the AfterLand of nanobot's flow: FinishDream with
// the subject Run set (CommitPeriodic for a dream it did not start).
// The landed dream's follow-up is not the caller's to cancel half-way (a
// daemon shutting down), so it runs on a context detached from ctx's
// cancellation, bounded by its own timeout.
func AfterLand(ctx context.Context, workspace string) error {
	run, _ := ctx.Value(runKey{}).(*flowRun)
	if run == nil {
		run = &flowRun{prefix: CommitPeriodic}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	var err error
	run.commit, run.compacted, err = FinishDream(ctx, workspace, run.prefix)
	run.finished = true
	return err
}

// AuditScope is what the audit history of a nanobot workspace
// records: the memory files the layout names as writable (SOUL.md,
// USER.md, memory/MEMORY.md), skills/, which nanobot's Dream writes, and
// memory/.dream_cursor, which the flow moves with each dream (undoing the
// dream must unconsume its history entries).
// The workspace also holds the user's conversations (sessions/*.jsonl in
// the pre-namespace layout), memory/history.jsonl and the cursors
// (HKUDS/nanobot, nanobot/agent/memory.py and nanobot/session/); those are
// not memory, and recording them would push private conversations to the
// sync remote.
func AuditScope(l host.Layout) []string {
	return append(l.Writable(), SkillsDir+"/", "memory/"+DreamCursorName)
}
