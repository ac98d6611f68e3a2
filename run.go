package dream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/internal/lossguard"
	"github.com/dreamkit/dream/internal/offline"
	"github.com/dreamkit/dream/internal/previous"
	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
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
	// Job names the job the dream ran; empty for the memory dream.
	Job string `json:"job,omitempty"`
	// Found counts what the job found, by kind (Outcome.Found).
	Found  map[string]int `json:"found,omitempty"`
	Review bool           `json:"review,omitempty"`
	// Sync is what the dream did with sync_remote; nil without one.
	Sync *DreamSync `json:"sync,omitempty"`
	// ParkReason says why a staged dream waits for review:
	// ParkReviewRequested, or ParkLossGuard and what it would lose.
	ParkReason string `json:"park_reason,omitempty"`
	MemoryDir  string `json:"memory_dir"`
	// Merged are files the user edited during the dream whose edit and the
	// dream's touched different lines: both landed. ForReview are files
	// where they overlap, and files whose changed values lack evidence
	// (Units says which): the memory's version was kept and the dream's is
	// staged for review as ReviewID (`dream diff`, `apply`, `discard`)
	// while the rest of the dream landed.
	Merged     []string  `json:"merged,omitempty"`
	ForReview  []string  `json:"for_review,omitempty"`
	ReviewID   string    `json:"review_id,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`

	// Diff is the unified diff of Changes on a dry run, the only moment it
	// can be read: the staging is dropped when Run returns. (A landed
	// dream's diff is in its history, a staged one's in its staging.)
	Diff string `json:"diff,omitempty"`
	// Index is the memory's index as its agent loads it after the dream,
	// when the runner measured it: an index left over budget is said here
	// even when nothing else needed changing.
	Index *IndexBudget `json:"index,omitempty"`

	// Summary (above) says what the dream did: for a model dream it is
	// built from Units, never from the model's words, which are
	// ModelSummary: the runner's own account, unchecked.
	ModelSummary string `json:"model_summary,omitempty"`
	// Units accounts for every unit of memory a model dream removed or
	// rewrote, and for each changed value its evidence or why it is held:
	// one JSON object per unit, as `dream show --json` prints them
	// ("fate": moved, merged, rewritten or deleted; "file", "line" and
	// "text" of the unit before the dream; "headings"; "to", the unit that
	// holds it now; "fact"; "lost"; "change", the values it replaced;
	// "evidence"; "held"). They are records for a reader, kept as the
	// audit history keeps them, not an API to compute with.
	Units []json.RawMessage `json:"units,omitempty"`

	// Estimate is what a model dream was expected to cost before it
	// started, Cost what it spent (tokens, dollars at its model's price);
	// both nil for a runner that spends nothing.
	Estimate *spend.Estimate `json:"estimate,omitempty"`
	Cost     *spend.Amount   `json:"cost,omitempty"`
}

type runOptions struct {
	sessions   int
	review     bool
	dryRun     bool
	hoursSince float64
	last       time.Time // the last completed run, for the runner
}

// dreamRun is one dream in flight: what its stages hand each other.
type dreamRun struct {
	d     *Dreamer
	ctx   context.Context
	o     runOptions
	rep   Report
	start time.Time
	// units are the loss guard's ledger of a model dream, annotated by
	// the evidence check (rep.Units as JSON).
	units []lossguard.Entry

	held *held
	hist *audit.History
	reg  *task.Registry
	task *task.Handle // nil until the task is registered
	tel  *telemetry.Log

	txn      *journal.Txn
	keepTxn  bool // the staging is parked for review, not discarded
	before   *memoryStart
	pinned   []string
	previous string // the previous dream's record (Job.Previous)

	updating   atomic.Bool // set from the runner's goroutines on its first write
	out        Outcome
	status     task.Status // how the task ends if the run fails
	changes    []journal.Change
	parkReason string
	// hold are files the evidence check keeps out of the landing, each
	// with why: parked for review while the rest lands.
	hold map[string]string

	reservation *spend.Hold // the dream's reservation in the spend ledger
	notStarted  bool        // refused by a spending ceiling before it started
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
	r.rep = Report{Status: StatusFailed, MemoryDir: d.cfg.MemoryDir, SessionsReviewed: o.sessions, StartedAt: r.start, Review: o.review, FilesTouched: []string{}, Changes: []Change{}, Job: d.jobName()}
	if d.cfg.Runner == nil {
		return r.rep, r.fail(errNoRunner)
	}
	if !d.cfg.Job.IsMemory() { // a job's write dir is made by its first run
		if err := os.MkdirAll(d.cfg.MemoryDir, 0o755); err != nil {
			return r.rep, r.fail(fmt.Errorf("dream: job %s's dir: %w", d.cfg.Job.Name, err))
		}
	}
	err := d.locked(ctx, stepOptions{afterRelease: r.released}, func(held *held, _ journal.Recovery) (bool, error) {
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
	switch {
	case r.notStarted:
		r.rep.Status = StatusNotStarted
	case r.status == task.StatusKilled:
		r.rep.Status = StatusKilled
	default:
		r.rep.Status = StatusFailed
	}
	r.rep.Error = err.Error()
	return err
}

// released runs once the lock is released and the cached time refreshed:
// the report is final (err is a failure no stage reported: recovering a
// dead dream's journal), Config.AfterLand follows a completed dream up,
// and the host hears of it.
func (r *dreamRun) released(err error) {
	d := r.d
	if err != nil && r.rep.Error == "" {
		r.fail(err)
	}
	r.rep.DurationMS = d.cfg.Now().Sub(r.start).Milliseconds()
	r.settle()
	if d.cfg.AfterLand != nil && r.rep.Status == StatusCompleted {
		if ferr := d.cfg.AfterLand(r.ctx, d.cfg.MemoryDir); ferr != nil {
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
	if d.cfg.Job.IsMemory() {
		r.previous = previous.Record(ctx, hist, d.cfg.StateDir, d.cfg.sharedState, d.cfg.MemoryDir)
	}
	if !r.o.dryRun { // a dry run changes nothing, the remote's history included
		if r.rep.Sync, err = d.syncPull(ctx, hist); err != nil {
			return err
		}
	}
	if err := d.fence("before staging"); err != nil {
		return err
	}
	id := task.NewID(r.start)
	r.rep.TaskID = id
	// A model dream is estimated and its estimate reserved against the
	// spending ceilings before it is a task: one that does not fit sends
	// nothing and changes nothing.
	if err := r.reserve(); err != nil {
		return err
	}
	if r.reg, err = task.Open(d.cfg.sharedState); err != nil {
		return err
	}
	if err := d.lock.SetTask(ctx, id); err != nil {
		d.cfg.Logf("dream: naming the task in the lock: %v", err)
	}
	who := r.who()
	th, err := r.reg.Start(task.Entry{ID: id, MemoryDir: d.cfg.MemoryDir, SessionsReviewed: r.o.sessions, Provider: d.cfg.Provider, Model: d.cfg.Model,
		ProviderWhy: who.Why, Estimate: who.Estimate, StartedAt: r.start, Review: r.o.review, Job: d.jobName(), Doing: d.cfg.Job.Doing})
	if err != nil {
		return err
	}
	r.task = th
	r.tel = telemetry.Open(d.cfg.sharedState)
	r.tel.Job = d.jobName()
	if err := r.tel.Fired(id, d.cfg.MemoryDir, r.o.hoursSince, r.o.sessions, who); err != nil {
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
			cancel(ErrKilled)
		case <-runCtx.Done():
		}
	}()
	d.watchLock(runCtx, cancel)
	s, spec := d.cfg.Settings, d.cfg.Job
	out, err := d.cfg.Runner.Run(runCtx, Job{
		TaskID:           r.rep.TaskID,
		MemoryDir:        r.txn.Dir(),
		MemoryDisplayDir: d.cfg.MemoryDir,
		RepoDir:          readable(spec, jobs.ReadRepo, d.cfg.RepoDir),
		SessionsDir:      readable(spec, jobs.ReadTranscripts, d.cfg.SessionsDir),
		SessionsReviewed: r.o.sessions,
		Pinned:           r.pinned,
		Progress:         r.progress,
		Budget:           r.budget(),
		Spec:             spec,
		Budgets:          Budgets{MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, Timeout: s.Timeout},
		LastRun:          r.o.last,
		Previous:         r.previous,
	})
	r.rep.Turns, r.rep.ToolCalls, r.rep.Usage, r.rep.Found = out.Turns, out.ToolCalls, out.Usage, out.Found
	if out.Strict || !spec.IsMemory() {
		r.rep.Summary = out.Summary // the engine's account of its own fix records, or a job's of its report
	} else {
		r.rep.ModelSummary = out.Summary // the runner's words, never the report's
	}
	r.rep.Index = out.Index
	if err == nil {
		err = context.Cause(runCtx) // a runner that ignored cancellation still fails
	}
	if err != nil && errors.Is(err, ErrOverBudget) && context.Cause(runCtx) == nil && len(out.FilesTouched) > 0 {
		// Stopped at a spending ceiling before a request, with work done:
		// that work is checked like any dream's and staged for review.
		out.Incomplete, err = err.Error(), nil
	}
	r.out = out
	if err != nil {
		if cause := context.Cause(runCtx); errors.Is(cause, ErrKilled) {
			r.status, err = task.StatusKilled, ErrKilled
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
// is kept as it was), and the loss guard passes it, holds it for review, or,
// for a model dream, holds the files whose changed values lack evidence
// while the rest lands (guardEvidence).
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
	// The loss and evidence guards judge memory. A job's files are its
	// reports, rewritten whole on each run by design, and its history
	// keeps every version for undo.
	v := lossguard.Verdict{Changed: true}
	if d.cfg.Job.IsMemory() {
		if v, err = d.guardLoss(r.out, r.before, r.txn.Dir()); err != nil {
			return err
		}
	}
	if r.changes, err = r.txn.Changes(); err != nil {
		return err
	}
	hold := ""
	switch {
	case !v.Changed:
		r.rep.Summary = "no changes" // whatever a model said
	case v.Hold:
		hold = v.Summary()
	}
	if !r.out.Strict && v.Changed && d.cfg.Job.IsMemory() {
		// What a model dream did is told from its ledger.
		ev := d.guardEvidence(r.out, v.Ledger, r.changes, r.txn.Dir())
		r.units, r.rep.Units = v.Ledger, unitsJSON(v.Ledger)
		if hold == "" && ev.Whole != "" {
			hold = ParkLossGuard + ev.Whole
		}
		if hold == "" {
			r.hold = ev.Hold
		}
		r.rep.Summary = lossguard.LedgerSummary(len(r.changes), v.Ledger, r.hold)
	}
	r.parkReason = ParkReviewRequested
	if r.out.Incomplete != "" && hold == "" {
		// Stopped before it finished: the whole of it waits for review.
		r.o.review, r.rep.Review, r.hold = true, true, nil
		r.parkReason = ParkIncomplete + r.out.Incomplete
		r.rep.ParkReason = r.parkReason
	}
	if hold != "" {
		r.o.review = true // staged for review, as --review does, and never applied
		r.rep.Summary, r.rep.Review, r.hold = hold, true, nil
		r.parkReason = ParkLossGuard + strings.TrimPrefix(hold, ParkLossGuard)
		r.rep.ParkReason = r.parkReason
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
		r.completed()
		return nil // the staging is discarded and the lock rewound
	case r.o.review:
		r.rep.ParkReason = r.parkReason
		r.txn.SetUnits(r.rep.Units)
		if err := r.txn.ParkFor(r.parkReason); err != nil {
			return err
		}
		r.keepTxn = true
		r.finish(task.StatusCompleted, nil)
		r.rep.Status = StatusStaged
		r.completed()
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
	d.syncPush(r.ctx, r.rep.Sync)
	if err := r.held.Complete(); err != nil {
		d.cfg.Logf("dream: completing the lock: %v", err)
	}
	r.finish(task.StatusCompleted, nil)
	r.rep.Status = StatusCompleted
	r.completed()
	return nil
}

// completed settles a dream that ran to its end (landed, staged for
// review, or a dry run) and records it, with what it used and cost, in
// the telemetry.
func (r *dreamRun) completed() {
	d := r.d
	r.settle()
	r.tel.Found = r.out.Found
	if err := r.tel.Completed(r.rep.TaskID, d.cfg.MemoryDir, r.rep.Usage, r.o.sessions, r.rep.FilesTouched, d.cfg.Now().Sub(r.start), r.rep.Cost); err != nil {
		d.cfg.Logf("dream: telemetry: %v", err)
	}
}

// commit lands the staged changes and records them in the audit history. A
// commit that landed part of the dream (someone edited memory while it ran:
// the journal kept their edit) records what landed, so it can be undone.
func (r *dreamRun) commit() error {
	if len(r.changes) == 0 {
		return nil
	}
	d, ctx := r.d, r.ctx
	o := commitOptions(ctx, r.hist)
	o.Hold = r.hold
	var held []lossguard.Entry
	for _, u := range r.units {
		if u.Held != "" {
			held = append(held, u)
		}
	}
	o.ReviewUnits = unitsJSON(held)
	res, err := r.txn.CommitWith(o)
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
	return r.hist.RecordDream(r.ctx, audit.Meta{DreamID: r.rep.TaskID, Status: status, Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: r.start, Kind: "dream", Paths: r.rep.FilesTouched, Units: r.rep.Units})
}

// unitsJSON is units as the report, the audit record and a staged review
// keep them (one JSON object each); validUnits reads them back.
func unitsJSON(units []lossguard.Entry) []json.RawMessage {
	var out []json.RawMessage
	for _, u := range units {
		if b, err := json.Marshal(u); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// validUnits are the units kept by unitsJSON that are still JSON objects
// (a history is a file anyone can edit): what does not read is skipped, so
// that a report or a `--json` answer never carries bytes that break it.
func validUnits(raw []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, u := range raw {
		var obj map[string]json.RawMessage
		if json.Unmarshal(u, &obj) == nil {
			out = append(out, u)
		}
	}
	return out
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
	if err := r.tel.Failed(id, d.cfg.MemoryDir, msg, string(phase), r.rep.Usage); err != nil {
		d.cfg.Logf("dream: telemetry: %v", err)
	}
}

// readable is dir when the job may read scope, else "".
func readable(spec jobs.Spec, scope, dir string) string {
	if spec.Reads(scope) {
		return dir
	}
	return ""
}

// jobName is the job's name for its task, telemetry and report: "" for the
// memory dream, whose records stay as they always were.
func (d *Dreamer) jobName() string {
	if d.cfg.Job.IsMemory() {
		return ""
	}
	return d.cfg.Job.Name
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

// stepOptions say how a step under the consolidation lock is taken.
type stepOptions struct {
	// claim sets the in-process running flag for the step (ErrRunning,
	// ErrClosed); a dream whose funnel already claimed it leaves it unset.
	claim bool
	// keepRecovering runs the step even when finishing a dead dream's
	// journal failed (Recover reports that failure itself); any other step
	// is refused, since it would work on a memory in an unknown state.
	keepRecovering bool
	// releaseErr returns a failure to complete or roll back the lock as the
	// step's error; by default it is logged, because the step's own outcome
	// (a landed dream, a refused undo) is what the caller acts on.
	releaseErr bool
	// wait is how long to wait for a lock another live holder has (see
	// acquire); 0 gives up at once.
	wait time.Duration
	// afterRelease, if set, runs once the lock was taken and released and
	// the cached time refreshed, with the step's final error: a dream's
	// report is final only then.
	afterRelease func(err error)
}

// stepFunc is the work done under the lock. held ends the acquisition: a
// step that must complete at a precise point (before its telemetry) calls
// held.Complete itself; otherwise complete says whether the step counts as
// a consolidation (the lock's time moves forward) or not (it is rewound to
// held.Prior). rec is what recovering a dead dream's journal did.
type stepFunc func(held *held, rec journal.Recovery) (complete bool, err error)

// locked is the one locked step every change of the memory takes: dreams,
// Undo, Apply, Sync and Recover. It acquires the lock (a live holder comes
// back as a *LockHeldError), finishes what a dead dream left in the journal,
// runs step, then completes or rolls back the lock and refreshes the cached
// last-consolidation time that the gates read.
func (d *Dreamer) locked(ctx context.Context, o stepOptions, step stepFunc) (err error) {
	if o.claim {
		release, err := d.claim()
		if err != nil {
			return err
		}
		defer release()
	}
	held, err := d.acquire(ctx, o.wait)
	if err != nil {
		err = d.lockHeld(ctx, err)
		if he, ok := err.(*LockHeldError); ok {
			he.Waited = o.wait
		}
		return err
	}
	complete := false
	defer func() {
		if !held.Done() {
			// A step that changed the memory says so with complete even
			// when a later part of it failed (Apply landed the files but
			// could not record them): the consolidation happened, so the
			// time gate must not reopen for it.
			if relErr := held.Release(complete); relErr != nil {
				relErr = fmt.Errorf("dream: releasing the consolidation lock: %w", relErr)
				if o.releaseErr {
					err = errors.Join(err, relErr)
				} else {
					d.cfg.Logf("%v", relErr)
				}
			}
		}
		d.setLast(d.lastFromDisk())
		if o.afterRelease != nil {
			o.afterRelease(err)
		}
	}()
	rec, err := d.recoverJournal(ctx)
	if err != nil {
		err = fmt.Errorf("dream: recovering an interrupted dream: %w", err)
		if !o.keepRecovering {
			return err
		}
	}
	if step == nil {
		return err
	}
	complete, serr := step(held, rec)
	return errors.Join(err, serr)
}

// acquire takes the lock, and while another live holder has it tries again
// until wait has passed, as git waits for its index lock: a pause that
// grows from 50 ms to a second, so a short holder (a sync) is followed at
// once and a long one (a dream) is not asked twenty times a second.
func (d *Dreamer) acquire(ctx context.Context, wait time.Duration) (*held, error) {
	deadline := time.Now().Add(wait)
	pause := 50 * time.Millisecond
	for {
		held, err := acquireOnce(ctx, d.lock)
		left := time.Until(deadline)
		if err == nil || !errors.Is(err, lock.ErrHeld) || left <= 0 {
			return held, err
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for the consolidation lock: %w", context.Cause(ctx))
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}

// FileReplacer is implemented by a Runner that never writes a staged file
// in place: every write is a new file renamed over the old one (as the
// sandbox's write and edit and the offline engine do). Such a runner gets a
// staging view in which unchanged files are hard links to the originals, so
// a dream over a memory of 30,000 files, or one with a 200 MB pasted log,
// copies only what it writes. Any other runner gets a full copy: an in-place
// write through a link would reach the user's memory before the commit.
type FileReplacer interface {
	ReplacesFiles() bool
}

// beginStaging starts the dream's transaction with the cheapest staging
// the runner allows: linked (FileReplacer) or a copy.
func (d *Dreamer) beginStaging(id string) (*journal.Txn, error) {
	r, ok := d.cfg.Runner.(FileReplacer)
	return journal.BeginWith(d.cfg.StateDir, d.cfg.MemoryDir, id, journal.Options{LinkUnchanged: ok && r.ReplacesFiles()})
}

// commitOptions lets the journal merge a file the user edited during the
// dream: the content before the dream is the audit history's HEAD, which
// recorded the hand edits just before the dream began (the journal asks
// before BeforeApply records the user's versions of the merged files, so
// HEAD is still that state). The user's edits are recorded as the user's,
// then the merge as the dream's, so undoing the dream keeps them.
func commitOptions(ctx context.Context, hist *audit.History) journal.CommitOptions {
	return journal.CommitOptions{BeforeApply: func(merged []string) error {
		_, err := hist.RecordHandEditsOf(ctx, merged)
		return err
	}, Base: startOf(ctx, hist)}
}

// startOf reads a file as the memory was just before the dream: the audit
// history's HEAD, which RecordHandEdits set right before staging began; ok
// is false when the file did not exist then.
func startOf(ctx context.Context, hist *audit.History) func(string) ([]byte, bool, error) {
	return func(path string) ([]byte, bool, error) {
		if hist == nil {
			return nil, false, nil
		}
		data, err := hist.HeadFile(ctx, path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, audit.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return data, true, nil
	}
}

// recoverJournal is journal.Recover plus the audit record of every commit it
// finished, under the dream it belongs to: without it the next dream would
// record a rolled-forward dream's files as hand edits, and `dream undo` of
// that dream would find nothing. Callers hold the lock.
func (d *Dreamer) recoverJournal(ctx context.Context) (journal.Recovery, error) {
	rec, err := journal.Recover(d.cfg.StateDir, d.cfg.MemoryDir)
	if len(rec.Landed) == 0 {
		return rec, err
	}
	hist, herr := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if herr != nil {
		return rec, errors.Join(err, fmt.Errorf("recording recovered dreams: %w", herr))
	}
	ids := make([]string, 0, len(rec.Landed))
	for id := range rec.Landed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		meta := audit.Meta{DreamID: id, Status: "recovered", Kind: audit.KindDream, StartedAt: d.cfg.Now(), Paths: rec.Landed[id]}
		if _, rerr := hist.RecordDream(ctx, meta); rerr != nil {
			err = errors.Join(err, fmt.Errorf("recording recovered dream %s: %w", id, rerr))
		}
	}
	return rec, err
}

// missingPinned is offline.MissingPinned, skipped when nothing is pinned.
func missingPinned(pinned []string, dir string) ([]string, error) {
	if len(pinned) == 0 {
		return nil, nil
	}
	return offline.MissingPinned(pinned, dir)
}
