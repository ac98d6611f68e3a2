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
	"github.com/dreamkit/dream/internal/lockbackend"
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
	TaskID           string    `json:"task_id"`
	Status           string    `json:"status"`
	FilesTouched     []string  `json:"files_touched"`
	Turns            int       `json:"turns"`
	ToolCalls        int       `json:"tool_calls"`
	Usage            llm.Usage `json:"usage"`
	Error            string    `json:"error,omitempty"`
	Summary          string    `json:"summary,omitempty"`
	Changes          []Change  `json:"changes"`
	SessionsReviewed int       `json:"sessions_reviewed"`
	AuditCommit      string    `json:"audit_commit,omitempty"`
	SyncError        string    `json:"sync_error,omitempty"`
	Review           bool      `json:"review,omitempty"`
	// ParkReason says why a staged dream waits for review:
	// ParkReviewRequested, or ParkLossGuard and what it would lose.
	ParkReason string `json:"park_reason,omitempty"`
	MemoryDir  string `json:"memory_dir"`
	// Merged are files the user edited during the dream whose edit and the
	// dream's touched different lines: both landed. ForReview are files
	// where they overlap: the user's version was kept and the dream's is
	// staged for review as ReviewID (`dream diff`, `apply`, `discard`).
	Merged     []string  `json:"merged,omitempty"`
	ForReview  []string  `json:"for_review,omitempty"`
	ReviewID   string    `json:"review_id,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`

	// Diff is the unified diff of Changes on a dry run, the only moment it
	// can be read: the staging is dropped when Run returns. (A landed
	// dream's diff is in its history, a staged one's in its staging.)
	Diff string `json:"diff,omitempty"`
}

type runOptions struct {
	sessions   int
	review     bool
	dryRun     bool
	hoursSince float64
}

// dreamRun is one dream in flight: what its stages hand each other.
type dreamRun struct {
	d     *Dreamer
	ctx   context.Context
	o     runOptions
	rep   Report
	start time.Time

	held *lockbackend.Held
	hist *audit.History
	reg  *task.Registry
	task *task.Handle // nil until the task is registered
	tel  *telemetry.Log

	txn     *journal.Txn
	keepTxn bool // the staging is parked for review, not discarded
	before  *memoryStart
	pinned  []string

	updating   atomic.Bool // set from the runner's goroutines on its first write
	out        Outcome
	status     task.Status // how the task ends if the run fails
	changes    []journal.Change
	parkReason string
}

// run is the Dreamer pattern under the lock (see locked), in stages:
// prepare (hand edits, pull, the task), stage (the staging copy and what the
// checks compare with), execute (the runner), verify (pinned facts, the
// host's edit guard, the loss guard) and land (fence, commit, audit, push,
// complete). A stage that fails returns its error; fail is the one path
// every failure takes.
func (d *Dreamer) run(ctx context.Context, o runOptions) (Report, error) {
	// The user's review setting stages every dream, whichever front end
	// started it (run, maybe, the hook's child, the daemon, MaybeStart).
	o.review = o.review || d.cfg.Settings.Review
	r := &dreamRun{d: d, ctx: ctx, o: o, start: d.cfg.Now(), status: task.StatusFailed}
	r.rep = Report{Status: StatusFailed, MemoryDir: d.cfg.MemoryDir, SessionsReviewed: o.sessions, StartedAt: r.start, Review: o.review, FilesTouched: []string{}, Changes: []Change{}}
	if d.cfg.Runner == nil {
		return r.rep, r.fail(ErrNoRunner)
	}
	err := d.locked(ctx, stepOptions{afterRelease: r.released}, func(held *lockbackend.Held, _ journal.Recovery) (bool, error) {
		r.held = held
		defer r.dropStaging()
		for _, stage := range []func() error{r.prepare, r.stage, r.execute, r.verify, r.land} {
			if err := stage(); err != nil {
				return false, r.fail(err)
			}
		}
		return false, nil // land completed the lock itself when it landed
	})
	if err != nil && r.rep.Error == "" {
		r.fail(err) // the lock was not taken: held, or unusable
	}
	return r.rep, err
}

// fail is the one path of a failed dream: the task ends (failed or
// killed) with the reason, telemetry records it, and the report says it.
func (r *dreamRun) fail(err error) error {
	if r.task != nil {
		r.finish(r.status, err)
	}
	if r.status == task.StatusKilled {
		r.rep.Status = StatusKilled
	} else {
		r.rep.Status = StatusFailed
	}
	r.rep.Error = err.Error()
	return err
}

// released runs once the lock is released and the cached time refreshed:
// the report is final (err is a failure no stage reported: recovering a
// dead dream's journal), nanobot's flow finishes a landed dream, and the
// host hears of it.
func (r *dreamRun) released(err error) {
	d := r.d
	if err != nil && r.rep.Error == "" {
		r.fail(err)
	}
	r.rep.DurationMS = d.cfg.Now().Sub(r.start).Milliseconds()
	if f := d.cfg.nanobot; f != nil && r.rep.Status == StatusCompleted {
		if ferr := f.finish(r.ctx, d.cfg.MemoryDir); ferr != nil {
			d.cfg.Logf("dream: %v", ferr)
		}
	}
	if d.cfg.OnDone != nil {
		d.cfg.OnDone(r.rep)
	}
}

// prepare gets the memory ready under the lock: hand edits recorded (so the
// dream can be undone without losing them), the remote's history pulled,
// the lock re-checked, then the task registered and announced.
func (r *dreamRun) prepare() error {
	d, ctx := r.d, r.ctx
	hist, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if err != nil {
		return fmt.Errorf("opening the audit history: %w", err)
	}
	r.hist = hist
	if _, err := hist.RecordHandEdits(ctx); err != nil {
		return fmt.Errorf("recording hand edits: %w", err)
	}
	if !r.o.dryRun { // a dry run changes nothing, the remote's history included
		if err := d.syncPull(ctx, hist); err != nil {
			return err
		}
	}
	if err := d.fence("before staging"); err != nil {
		return err
	}
	if r.reg, err = task.Open(d.cfg.StateDir); err != nil {
		return err
	}
	id := task.NewID(r.start)
	r.rep.TaskID = id
	if err := d.lock.SetTask(ctx, id); err != nil {
		d.cfg.Logf("dream: naming the task in the lock: %v", err)
	}
	th, err := r.reg.Start(task.Entry{ID: id, MemoryDir: d.cfg.MemoryDir, SessionsReviewed: r.o.sessions, Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: r.start, Review: r.o.review})
	if err != nil {
		return err
	}
	r.task = th
	r.tel = telemetry.Open(d.cfg.StateDir)
	if err := r.tel.Fired(id, d.cfg.MemoryDir, r.o.hoursSince, r.o.sessions); err != nil {
		d.cfg.Logf("dream: telemetry: %v", err)
	}
	return nil
}

// stage opens the dream's transaction and reads what the checks compare
// with: the memory as it is now and the facts that must survive.
func (r *dreamRun) stage() error {
	d := r.d
	txn, err := d.beginStaging(r.rep.TaskID)
	if err != nil {
		return fmt.Errorf("staging the memory dir: %w", err)
	}
	r.txn = txn
	if r.before, err = d.memoryBefore(r.ctx, txn, r.hist); err != nil {
		return fmt.Errorf("reading the memory before the dream: %w", err)
	}
	if r.pinned, err = offline.PinnedFacts(d.cfg.MemoryDir, d.cfg.Settings.Pinned); err != nil {
		return fmt.Errorf("reading pinned facts: %w", err)
	}
	return nil
}

// dropStaging discards the staging unless it was parked for review.
func (r *dreamRun) dropStaging() {
	if r.txn == nil || r.keepTxn {
		return
	}
	if err := r.txn.Discard(); err != nil {
		r.d.cfg.Logf("dream: discarding staging: %v", err)
	}
}

// execute runs the runner on the staging copy, bounded by the timeout, a
// kill from another terminal and the loss of the lock.
func (r *dreamRun) execute() error {
	d, ctx := r.d, r.ctx
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if t := d.cfg.Settings.Timeout; t > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeoutCause(runCtx, t, fmt.Errorf("timed out after %s", t))
		defer stop()
	}
	go func() {
		select {
		case <-r.task.KillRequested():
			cancel(errKilled)
		case <-runCtx.Done():
		}
	}()
	d.watchLock(runCtx, cancel)
	out, err := d.cfg.Runner.Run(runCtx, Job{
		TaskID:           r.rep.TaskID,
		MemoryDir:        r.txn.Dir(),
		MemoryDisplayDir: d.cfg.MemoryDir,
		RepoDir:          d.cfg.RepoDir,
		SessionsDir:      d.cfg.SessionsDir,
		SessionsReviewed: r.o.sessions,
		Pinned:           r.pinned,
		Progress:         r.progress,
	})
	r.out = out
	r.rep.Turns, r.rep.ToolCalls, r.rep.Usage, r.rep.Summary = out.Turns, out.ToolCalls, out.Usage, out.Summary
	if err == nil {
		err = context.Cause(runCtx) // a runner that ignored cancellation still fails
	}
	if err != nil {
		if cause := context.Cause(runCtx); errors.Is(cause, errKilled) {
			r.status, err = task.StatusKilled, errKilled
		} else if cause != nil && ctx.Err() == nil {
			err = cause // the timeout's message, not "context deadline exceeded"
		}
		return err
	}
	return d.fence("after the agent ran")
}

// progress records a runner's event in the task entry and passes it on.
func (r *dreamRun) progress(p Progress) {
	h := r.task
	switch p.Kind {
	case ProgressTurn:
		_ = h.AddTurn(p.Text)
	case ProgressToolCall:
		_ = h.AddToolCall()
	case ProgressFileTouched:
		_ = h.AddFileTouched(p.Path)
		r.updating.Store(true)
	case ProgressUsage:
		_ = h.SetUsage(p.Usage)
	}
	r.d.cfg.OnProgress(r.rep.TaskID, p)
}

// verify checks the staged result before anything lands: every pinned fact
// is still there, the host agent can load each changed file (a refused one
// is kept as it was), and the loss guard passes or holds it for review.
func (r *dreamRun) verify() error {
	d := r.d
	// With nothing pinned there is nothing to look for: no need to read the
	// whole staged memory again.
	r.txn.Freeze() // the runner has returned: the checks and the commit share one look at staging
	if missing, err := missingPinned(r.pinned, r.txn.Dir()); err != nil || len(missing) > 0 {
		if err == nil {
			err = fmt.Errorf("the dream dropped %d pinned fact(s), rolled back: %s", len(missing), quoteList(missing))
		}
		return err
	}
	refused, err := d.guardEdits(r.txn, r.before)
	for _, ref := range refused {
		r.progress(Progress{Kind: ProgressTurn, Text: "kept as it was, the host agent could not load the change: " + ref})
	}
	if err != nil {
		return err
	}
	held, err := d.guardLoss(&r.rep, r.out, r.before, r.txn.Dir())
	if err != nil {
		return err
	}
	r.parkReason = ParkReviewRequested
	if held {
		r.o.review = true // staged for review, as --review does, and never applied
		r.parkReason = ParkLossGuard + r.rep.Summary
		r.rep.ParkReason = r.parkReason
	}
	if r.changes, err = r.txn.Changes(); err != nil {
		return err
	}
	if err := d.fence("before the commit"); err != nil {
		return err
	}
	r.rep.Changes, r.rep.FilesTouched = changesOf(r.changes), changedPaths(r.changes)
	return nil
}

// land ends a verified dream: a dry run reports and drops it, a review run
// parks it, any other lands it (fence, commit, audit, push) and completes
// the lock.
func (r *dreamRun) land() error {
	switch {
	case r.o.dryRun:
		diff, err := r.txn.Diff()
		if err != nil {
			return fmt.Errorf("dream: the diff of the dry run: %w", err)
		}
		r.rep.Diff = diff
		r.finish(task.StatusCompleted, nil)
		r.rep.Status = StatusDryRun
		return nil // the staging is discarded and the lock rewound
	case r.o.review:
		r.rep.ParkReason = r.parkReason
		if err := r.txn.ParkFor(r.parkReason); err != nil {
			return err
		}
		r.keepTxn = true
		r.finish(task.StatusCompleted, nil)
		r.rep.Status = StatusStaged
		return nil
	}
	d := r.d
	// Nothing lands unless the lock is provably still ours (fencing).
	if err := d.lock.Fence(r.ctx); err != nil {
		return fmt.Errorf("dream: not landing the dream: %w", err)
	}
	if err := r.commit(); err != nil {
		return err
	}
	r.rep.SyncError = d.syncPush(r.ctx, r.hist)
	if err := r.held.Complete(); err != nil {
		d.cfg.Logf("dream: completing the lock: %v", err)
	}
	r.finish(task.StatusCompleted, nil)
	if err := r.tel.Completed(r.rep.TaskID, d.cfg.MemoryDir, r.rep.Usage, r.o.sessions, r.rep.FilesTouched, d.cfg.Now().Sub(r.start)); err != nil {
		d.cfg.Logf("dream: telemetry: %v", err)
	}
	r.rep.Status = StatusCompleted
	return nil
}

// commit lands the staged changes and records them in the audit history. A
// commit that landed part of the dream (someone edited memory while it ran:
// the journal kept their edit) records what landed, so it can be undone.
func (r *dreamRun) commit() error {
	if len(r.changes) == 0 {
		return nil
	}
	d, ctx := r.d, r.ctx
	res, err := r.txn.CommitWith(commitOptions(ctx, r.hist))
	r.rep.Merged, r.rep.ForReview, r.rep.ReviewID = res.Merged, res.ForReview, res.ReviewID
	if err != nil {
		if len(res.Applied) > 0 {
			r.rep.Changes, r.rep.FilesTouched = changesOf(res.Applied), changedPaths(res.Applied)
			if c, aerr := r.record("partial"); aerr == nil {
				r.rep.AuditCommit = c
			}
		}
		return fmt.Errorf("committing the dream: %w", err)
	}
	r.rep.Changes, r.rep.FilesTouched = changesOf(res.Applied), changedPaths(res.Applied)
	commit, err := r.record(StatusCompleted)
	if err != nil {
		// The memory is committed; only the history entry is missing,
		// and the next dream records it as a hand edit.
		d.cfg.Logf("dream: recording the audit history: %v", err)
	}
	r.rep.AuditCommit = commit
	return nil
}

// record writes the landed files to the audit history under this dream.
func (r *dreamRun) record(status string) (string, error) {
	d := r.d
	return r.hist.RecordDream(r.ctx, audit.Meta{DreamID: r.rep.TaskID, Status: status, Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: r.start, Kind: "dream", Paths: r.rep.FilesTouched})
}

// finish ends the task entry, prunes old ones and, for a dream that did not
// complete, records the failure with the phase it reached.
func (r *dreamRun) finish(status task.Status, cause error) {
	d, id := r.d, r.rep.TaskID
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	if err := r.task.Finish(status, msg); err != nil {
		d.cfg.Logf("dream: finishing task %s: %v", id, err)
	}
	if err := r.reg.Prune(task.DefaultKeep); err != nil {
		d.cfg.Logf("dream: pruning old tasks: %v", err)
	}
	if status == task.StatusCompleted {
		return
	}
	phase := task.PhaseStarting
	if r.updating.Load() {
		phase = task.PhaseUpdating
	}
	if err := r.tel.Failed(id, d.cfg.MemoryDir, msg, string(phase)); err != nil {
		d.cfg.Logf("dream: telemetry: %v", err)
	}
}

func (d *Dreamer) lastFromDisk() time.Time {
	t, err := d.lock.LastConsolidatedAt()
	if err != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
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
	return gate.CountSessions(ctx, d.cfg.SessionsDir, since, d.rule, d.currentSession())
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
