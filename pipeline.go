package dream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/offline"
	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/llm"
)

// Status values of a Report.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusKilled    = "killed"
	// StatusStaged: a review run whose changes wait for `dream apply`.
	StatusStaged = "staged"
	// StatusDryRun: a dry run; Changes say what a dream would have changed.
	StatusDryRun = "dry_run"
)

// errKilled is the cancellation cause of a dream stopped by `dream kill`.
var errKilled = errors.New("killed by request")

// Report is the outcome of one dream, as `dream run --json` prints it.
type Report struct {
	TaskID           string           `json:"task_id"`
	Status           string           `json:"status"`
	FilesTouched     []string         `json:"files_touched"`
	Turns            int              `json:"turns"`
	ToolCalls        int              `json:"tool_calls"`
	Usage            llm.Usage        `json:"usage"`
	Error            string           `json:"error,omitempty"`
	Summary          string           `json:"summary,omitempty"`
	Changes          []journal.Change `json:"changes"`
	SessionsReviewed int              `json:"sessions_reviewed"`
	AuditCommit      string           `json:"audit_commit,omitempty"`
	SyncError        string           `json:"sync_error,omitempty"`
	Review           bool             `json:"review,omitempty"`
	// ParkReason says why a staged dream waits for review:
	// ParkReviewRequested, or ParkLossGuard and what it would lose.
	ParkReason string `json:"park_reason,omitempty"`
	MemoryDir  string `json:"memory_dir"`
	// Merged, ForReview and ReviewID: files the user edited during the
	// dream; see journal.CommitResult.
	Merged     []string  `json:"merged,omitempty"`
	ForReview  []string  `json:"for_review,omitempty"`
	ReviewID   string    `json:"review_id,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
}

type runOptions struct {
	sessions   int
	review     bool
	dryRun     bool
	hoursSince float64
}

// run is the Dreamer pattern under the lock: acquire, recover leftovers,
// record hand edits, register the task, stage, run, check, then commit and
// complete, or discard and roll back.
func (d *Dreamer) run(ctx context.Context, o runOptions) (rep Report, err error) {
	start := d.cfg.Now()
	rep = Report{Status: StatusFailed, MemoryDir: d.cfg.MemoryDir, SessionsReviewed: o.sessions, StartedAt: start, Review: o.review, FilesTouched: []string{}, Changes: []journal.Change{}}
	if d.cfg.Runner == nil {
		rep.Error = ErrNoRunner.Error()
		return rep, ErrNoRunner
	}
	prior, err := d.lock.TryAcquire()
	if err != nil {
		err = d.lockHeld(ctx, err)
		rep.Error = err.Error()
		return rep, err
	}
	// From here on every exit either completes or rolls back the lock.
	committed := false
	defer func() {
		if !committed {
			if rbErr := d.lock.Rollback(prior); rbErr != nil {
				d.cfg.Logf("dream: rolling back the lock: %v", rbErr)
			}
		}
		d.setLast(d.lastFromDisk())
		rep.DurationMS = d.cfg.Now().Sub(start).Milliseconds()
		if f := d.cfg.nanobot; f != nil && rep.Status == StatusCompleted {
			if ferr := f.finish(ctx, d.cfg.MemoryDir); ferr != nil {
				d.cfg.Logf("dream: %v", ferr)
			}
		}
		if d.cfg.OnDone != nil {
			d.cfg.OnDone(rep)
		}
	}()

	if _, err := d.recoverJournal(ctx); err != nil {
		return d.fail(&rep, fmt.Errorf("recovering an interrupted dream: %w", err))
	}
	hist, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if err != nil {
		return d.fail(&rep, fmt.Errorf("opening the audit history: %w", err))
	}
	if _, err := hist.RecordHandEdits(ctx); err != nil {
		return d.fail(&rep, fmt.Errorf("recording hand edits: %w", err))
	}
	if err := d.syncPull(ctx, hist); err != nil {
		return d.fail(&rep, err)
	}
	if err := d.fence("before staging"); err != nil {
		return d.fail(&rep, err)
	}

	reg, err := task.Open(d.cfg.StateDir)
	if err != nil {
		return d.fail(&rep, err)
	}
	id := task.NewID(start)
	rep.TaskID = id
	if err := d.lock.SetTask(ctx, id); err != nil {
		d.cfg.Logf("dream: naming the task in the lock: %v", err)
	}
	h, err := reg.Start(task.Entry{ID: id, MemoryDir: d.cfg.MemoryDir, SessionsReviewed: o.sessions, Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: start, Review: o.review})
	if err != nil {
		return d.fail(&rep, err)
	}
	tel := telemetry.Open(d.cfg.StateDir)
	if err := tel.Fired(id, d.cfg.MemoryDir, o.hoursSince, o.sessions); err != nil {
		d.cfg.Logf("dream: telemetry: %v", err)
	}
	var updating atomic.Bool // the runner may report progress from its own goroutines
	finish := func(status task.Status, cause error) {
		msg := ""
		if cause != nil {
			msg = cause.Error()
		}
		if err := h.Finish(status, msg); err != nil {
			d.cfg.Logf("dream: finishing task %s: %v", id, err)
		}
		if err := reg.Prune(task.DefaultKeep); err != nil {
			d.cfg.Logf("dream: pruning old tasks: %v", err)
		}
		if status != task.StatusCompleted {
			phase := task.PhaseStarting
			if updating.Load() {
				phase = task.PhaseUpdating
			}
			if err := tel.Failed(id, d.cfg.MemoryDir, msg, string(phase)); err != nil {
				d.cfg.Logf("dream: telemetry: %v", err)
			}
		}
	}

	txn, err := d.beginStaging(id)
	if err != nil {
		err = fmt.Errorf("staging the memory dir: %w", err)
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}
	keepTxn := false
	defer func() {
		if !keepTxn {
			if err := txn.Discard(); err != nil {
				d.cfg.Logf("dream: discarding staging: %v", err)
			}
		}
	}()

	before, err := d.memoryBefore(ctx, txn, hist)
	if err != nil {
		err = fmt.Errorf("reading the memory before the dream: %w", err)
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}

	pinned, err := offline.PinnedFacts(d.cfg.MemoryDir, d.cfg.Settings.Pinned)
	if err != nil {
		err = fmt.Errorf("reading pinned facts: %w", err)
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if t := d.cfg.Settings.Timeout; t > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeoutCause(runCtx, t, fmt.Errorf("timed out after %s", t))
		defer stop()
	}
	go func() {
		select {
		case <-h.KillRequested():
			cancel(errKilled)
		case <-runCtx.Done():
		}
	}()
	d.watchLock(runCtx, cancel)

	progress := func(p Progress) {
		switch p.Kind {
		case ProgressTurn:
			_ = h.AddTurn(p.Text)
		case ProgressToolCall:
			_ = h.AddToolCall()
		case ProgressFileTouched:
			_ = h.AddFileTouched(p.Path)
			updating.Store(true)
		case ProgressUsage:
			_ = h.SetUsage(p.Usage)
		}
		d.cfg.OnProgress(id, p)
	}
	out, runErr := d.cfg.Runner.Run(runCtx, Job{
		TaskID:           id,
		MemoryDir:        txn.Dir(),
		MemoryDisplayDir: d.cfg.MemoryDir,
		RepoDir:          d.cfg.RepoDir,
		SessionsDir:      d.cfg.SessionsDir,
		SessionsReviewed: o.sessions,
		Pinned:           pinned,
		Progress:         progress,
	})
	rep.Turns, rep.ToolCalls, rep.Usage, rep.Summary = out.Turns, out.ToolCalls, out.Usage, out.Summary
	if runErr == nil {
		runErr = context.Cause(runCtx) // a runner that ignored cancellation still fails
	}
	if runErr != nil {
		status := task.StatusFailed
		if cause := context.Cause(runCtx); errors.Is(cause, errKilled) {
			status, rep.Status, runErr = task.StatusKilled, StatusKilled, errKilled
		} else if cause != nil && ctx.Err() == nil {
			runErr = cause // the timeout's message, not "context deadline exceeded"
		}
		finish(status, runErr)
		return d.fail(&rep, runErr)
	}
	if err := d.fence("after the agent ran"); err != nil {
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}

	// With nothing pinned there is nothing to look for: no need to read the
	// whole staged memory again.
	if missing, err := missingPinned(pinned, txn.Dir()); err != nil || len(missing) > 0 {
		if err == nil {
			err = fmt.Errorf("the dream dropped %d pinned fact(s), rolled back: %s", len(missing), quoteList(missing))
		}
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}

	refused, err := d.guardEdits(txn, before)
	for _, r := range refused {
		progress(Progress{Kind: ProgressTurn, Text: "kept as it was, the host agent could not load the change: " + r})
	}
	if err != nil {
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}

	held, err := d.guardLoss(&rep, out, before, txn.Dir())
	if err != nil {
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}
	parkReason := ParkReviewRequested
	if held {
		o.review = true // staged for review, as --review does, and never applied
		parkReason = ParkLossGuard + rep.Summary
	}

	changes, err := txn.Changes()
	if err != nil {
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}
	if err := d.fence("before the commit"); err != nil {
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}
	rep.Changes = changes
	rep.FilesTouched = changedPaths(changes)

	if o.dryRun {
		if held {
			rep.ParkReason = parkReason
		}
		finish(task.StatusCompleted, nil)
		rep.Status = StatusDryRun
		return rep, nil // the deferred discard and rollback undo everything
	}
	if o.review {
		rep.ParkReason = parkReason
		if err := txn.ParkFor(parkReason); err != nil {
			finish(task.StatusFailed, err)
			return d.fail(&rep, err)
		}
		keepTxn = true
		finish(task.StatusCompleted, nil)
		rep.Status = StatusStaged
		return rep, nil
	}

	// Nothing lands unless the lock is provably still ours (fencing).
	if err := d.lock.Fence(ctx); err != nil {
		err = fmt.Errorf("dream: not landing the dream: %w", err)
		finish(task.StatusFailed, err)
		return d.fail(&rep, err)
	}
	if len(changes) > 0 {
		res, err := txn.CommitWith(commitOptions(ctx, hist))
		applied := res.Applied
		rep.Merged, rep.ForReview, rep.ReviewID = res.Merged, res.ForReview, res.ReviewID
		if err != nil {
			err = fmt.Errorf("committing the dream: %w", err)
			if len(applied) > 0 {
				// Someone edited memory while the commit ran: the journal
				// kept their edit and landed the rest. Record what landed
				// under this dream, so that it can be read and undone.
				rep.Changes, rep.FilesTouched = applied, changedPaths(applied)
				if c, aerr := hist.RecordDream(ctx, audit.Meta{DreamID: id, Status: "partial", Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: start, Kind: "dream", Paths: changedPaths(applied)}); aerr == nil {
					rep.AuditCommit = c
				}
			}
			finish(task.StatusFailed, err)
			return d.fail(&rep, err)
		}
		rep.Changes, rep.FilesTouched = applied, changedPaths(applied)
		commit, err := hist.RecordDream(ctx, audit.Meta{DreamID: id, Status: StatusCompleted, Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: start, Kind: "dream", Paths: changedPaths(applied)})
		if err != nil {
			// The memory is committed; only the history entry is missing,
			// and the next dream records it as a hand edit.
			d.cfg.Logf("dream: recording the audit history: %v", err)
		}
		rep.AuditCommit = commit
	}
	rep.SyncError = d.syncPush(ctx, hist)
	if err := d.lock.Complete(); err != nil {
		d.cfg.Logf("dream: completing the lock: %v", err)
	}
	committed = true
	finish(task.StatusCompleted, nil)
	if err := tel.Completed(id, d.cfg.MemoryDir, rep.Usage, o.sessions, rep.FilesTouched, d.cfg.Now().Sub(start)); err != nil {
		d.cfg.Logf("dream: telemetry: %v", err)
	}
	rep.Status = StatusCompleted
	return rep, nil
}

// fail fills the report for a failed run.
func (d *Dreamer) fail(rep *Report, err error) (Report, error) {
	if rep.Status != StatusKilled {
		rep.Status = StatusFailed
	}
	rep.Error = err.Error()
	return *rep, err
}

func (d *Dreamer) lastFromDisk() time.Time {
	t, err := d.lock.LastConsolidatedAt()
	if err != nil {
		return d.lastAt
	}
	return t
}

// countSessions runs the session gate's scan.
func (d *Dreamer) countSessions(ctx context.Context, since time.Time) (int, error) {
	if d.cfg.SessionsDir == "" {
		return 0, nil
	}
	since = gate.SessionsSince(d.cfg.Now(), since)
	return gate.CountSessions(ctx, d.cfg.SessionsDir, since, d.cfg.SessionRule, d.currentSession())
}

func changedPaths(cs []journal.Change) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
