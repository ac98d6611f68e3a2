package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/history"
	"github.com/dreamkit/dream/internal/historydream"
	"github.com/dreamkit/dream/llm"
)

// nanobot's flow. Its memory is a workspace, not a folder of notes:
// SOUL.md and USER.md at the root, memory/MEMORY.md and the append-only
// memory/history.jsonl below it, skills/ beside them (HKUDS/nanobot,
// nanobot/agent/memory.py). A dream consumes the history entries no dream
// has read yet (memory/.dream_cursor) into the three files. The Dreamer's
// memory dir is the workspace, so that the lock, the journal, the audit
// history and `dream undo` cover all three files and the cursor together.

// HistoryDreamRunner is the Runner of nanobot's flow: the history backlog
// drained batch after batch (historydream.Run) on the Dreamer's staging copy
// of the workspace, with the dream cursor written into that copy, so that it
// advances exactly when the dream's edits land.
type HistoryDreamRunner struct {
	Provider        llm.Provider
	Model           string
	MaxTurns        int
	MaxTokens       int64
	MaxOutputTokens int
	// BatchSize is the most entries per model run (default 20).
	BatchSize int
	// Template replaces the dream instructions when not empty.
	Template string
}

// Run implements Runner.
func (r *HistoryDreamRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	if r.Provider == nil {
		return Outcome{}, errors.New("dream: the nanobot history dream needs a model (set a provider); the offline engine cannot read history")
	}
	res, err := historydream.Run(ctx, historydream.Config{
		Workspace:        job.MemoryDir,
		DisplayWorkspace: job.MemoryDisplayDir,
		SessionsDir:      job.SessionsDir,
		Provider:         r.Provider,
		Model:            r.Model,
		MaxOutputTokens:  r.MaxOutputTokens,
		MaxTurns:         r.MaxTurns,
		MaxTokens:        r.MaxTokens,
		BatchSize:        r.BatchSize,
		Template:         r.Template,
		OnEvent: func(e agent.Event) {
			job.Progress(Progress{Kind: ProgressKind(e.Kind), Turn: e.Turn, Text: e.Text, Tool: e.Tool, Path: e.Path, IsError: e.IsError, Usage: e.Usage})
		},
	})
	out := Outcome{Turns: res.Turns, ToolCalls: res.ToolCalls, Usage: res.Usage, FilesTouched: res.FilesTouched}
	out.Summary = fmt.Sprintf("history dream: %d entr%s in %d batch(es), dream cursor %d -> %d", res.Consumed, plural(res.Consumed, "y", "ies"), res.Batches, res.StartCursor, res.Cursor)
	return out, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

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
	for _, p := range []string{filepath.Join(mem, history.LogName), filepath.Join(mem, "MEMORY.md"), filepath.Join(dir, "SOUL.md"), filepath.Join(dir, "USER.md"), filepath.Join(dir, ".nanobot")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// RunNanobot runs one history dream now with d (whose memory dir is the
// workspace and whose runner is a HistoryDreamRunner) and, when it landed,
// finishes it as nanobot does: a commit in nanobot's git store and a history
// compaction. prefix is the commit subject (historydream.CommitManual or
// CommitPeriodic).
func RunNanobot(ctx context.Context, d *Dreamer, o RunOptions, prefix string) (NanobotReport, error) {
	ws := d.cfg.MemoryDir
	log := history.Open(filepath.Join(ws, "memory"), history.Options{})
	before, _ := log.DreamCursor()
	f := d.cfg.nanobot
	if f != nil {
		// The Dreamer finishes the dream itself: with this run's prefix.
		f.mu.Lock()
		f.prefix, f.commit, f.compacted, f.err = prefix, "", 0, nil
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.prefix = historydream.CommitPeriodic
			f.mu.Unlock()
		}()
	}
	rep, err := d.Run(ctx, o)
	nr := NanobotReport{Report: rep, DreamCursor: before}
	if after, cerr := log.DreamCursor(); cerr == nil {
		nr.DreamCursor = after
	}
	if err != nil || rep.Status != StatusCompleted {
		return nr, err
	}
	if nr.DreamCursor > before {
		res, rerr := log.After(ctx, before, history.Query{})
		if rerr == nil {
			for _, e := range res.Entries {
				if e.Cursor <= nr.DreamCursor {
					nr.HistoryEntriesConsumed++
				}
			}
		}
	}
	if f != nil {
		f.mu.Lock()
		nr.NanobotCommit, nr.HistoryCompacted = f.commit, f.compacted
		f.mu.Unlock()
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
	commit, gerr := historydream.CommitGitStore(ctx, workspace, prefix)
	if gerr != nil {
		gerr = fmt.Errorf("committing to nanobot's git store: %w", gerr)
	}
	rep, cerr := history.Open(filepath.Join(workspace, "memory"), history.Options{}).Compact(ctx, history.DefaultMaxEntries)
	if cerr != nil {
		cerr = fmt.Errorf("compacting the history: %w", cerr)
	}
	return commit, rep.Before - rep.After, errors.Join(gerr, cerr)
}
