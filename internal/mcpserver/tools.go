package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/task"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/llm"
)

// Inputs. Field names follow the command line's (`dream show ID
// --memory-dir M`); the schema of each is derived from its type, and
// omitempty makes a field optional.

type StatusInput struct {
	MemoryDir string `json:"memory_dir,omitempty" jsonschema:"the memory dir; default: the server's"`
}

type RunInput struct {
	MemoryDir string `json:"memory_dir,omitempty" jsonschema:"the memory dir; default: the server's"`
	Apply     bool   `json:"apply,omitempty" jsonschema:"land the changes at once instead of staging them for dream_diff and dream_apply (default false: staged for review)"`
	Job       string `json:"job,omitempty" jsonschema:"run this job instead of the memory dream (health, review, or a [[job]] of the user's config; dream jobs lists them): it writes its own dir, on the server's repository"`
}

type IDInput struct {
	ID        string `json:"id" jsonschema:"the dream id (or a unique prefix), from dream_run, dream_tasks or dream_log"`
	MemoryDir string `json:"memory_dir,omitempty" jsonschema:"the memory dir; default: the one the dream worked on"`
}

type TasksInput struct {
	RunningOnly bool `json:"running_only,omitempty" jsonschema:"only dreams running now"`
	Limit       int  `json:"limit,omitempty" jsonschema:"most entries to return (default 20)"`
}

type KillInput struct {
	ID          string `json:"id" jsonschema:"the running dream's id (or a unique prefix), from dream_tasks"`
	WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"how long to wait for the dream to roll back (default 10, at most 60)"`
}

type LogInput struct {
	MemoryDir   string `json:"memory_dir,omitempty" jsonschema:"the memory dir; default: the server's"`
	Limit       int    `json:"limit,omitempty" jsonschema:"most entries, newest first (default 10)"`
	IncludeDiff bool   `json:"include_diff,omitempty" jsonschema:"include each entry's unified diff (default false: file stats only)"`
}

type UndoInput struct {
	ID        string `json:"id" jsonschema:"the dream id to undo (or a unique prefix), from dream_log"`
	MemoryDir string `json:"memory_dir,omitempty" jsonschema:"the memory dir; default: the one the dream worked on"`
	Force     bool   `json:"force,omitempty" jsonschema:"undo even where later changes touched the same lines"`
}

// Outputs: plain JSON shapes, so that the derived output schemas are exact.

type Gate struct {
	Name   string `json:"name"`
	Open   bool   `json:"open"`
	Detail string `json:"detail"`
}

type StatusOutput struct {
	MemoryDir            string   `json:"memory_dir"`
	Enabled              bool     `json:"enabled"`
	LastConsolidatedAt   string   `json:"last_consolidated_at,omitempty"`
	SessionsTouchedSince int      `json:"sessions_touched_since"`
	MinHours             float64  `json:"min_hours"`
	MinSessions          int      `json:"min_sessions"`
	LockHeld             bool     `json:"lock_held"`
	LockPID              int      `json:"lock_pid,omitempty"`
	Gates                []Gate   `json:"gates"`
	Next                 string   `json:"next"`
	Recovered            []string `json:"recovered,omitempty"`
	// Provider says who dreams and why; Cost what a dream would cost now
	// and what the spending ceilings leave.
	Provider string             `json:"provider,omitempty"`
	Cost     *dream.CostOutlook `json:"cost,omitempty"`
}

type RunOutput struct {
	TaskID       string         `json:"task_id"`
	Status       string         `json:"status"`
	MemoryDir    string         `json:"memory_dir"`
	Staged       bool           `json:"staged"`
	FilesTouched []string       `json:"files_touched"`
	Changes      []dream.Change `json:"changes"`
	Turns        int            `json:"turns"`
	ToolCalls    int            `json:"tool_calls"`
	Usage        llm.Usage      `json:"usage"`
	Summary      string         `json:"summary,omitempty"`
	AuditCommit  string         `json:"audit_commit,omitempty"`
	DurationMS   int64          `json:"duration_ms"`
}

type DiffOutput struct {
	ID        string         `json:"id"`
	MemoryDir string         `json:"memory_dir"`
	Source    string         `json:"source" jsonschema:"staged: waiting for dream_apply; audit: already landed"`
	Status    string         `json:"status,omitempty"`
	Changes   []dream.Change `json:"changes"`
	Diff      string         `json:"diff"`
	// Units are a model dream's account of the units it removed or
	// rewrote (for a staged dream, those it staged).
	Units []json.RawMessage `json:"units,omitempty"`
	// ParkReason says why a staged dream waits for review.
	ParkReason string `json:"park_reason,omitempty"`
}

type ApplyOutput struct {
	ID          string         `json:"id"`
	MemoryDir   string         `json:"memory_dir"`
	Changes     []dream.Change `json:"changes"`
	AuditCommit string         `json:"audit_commit,omitempty"`
}

type DiscardOutput struct {
	ID        string `json:"id"`
	MemoryDir string `json:"memory_dir"`
	Discarded bool   `json:"discarded"`
}

type Task struct {
	ID               string    `json:"id"`
	Status           string    `json:"status"`
	Phase            string    `json:"phase"`
	MemoryDir        string    `json:"memory_dir"`
	PID              int       `json:"pid"`
	Review           bool      `json:"review,omitempty"`
	SessionsReviewed int       `json:"sessions_reviewed"`
	FilesTouched     []string  `json:"files_touched"`
	RecentTurns      []string  `json:"recent_turns"`
	ToolCalls        int       `json:"tool_calls"`
	Usage            llm.Usage `json:"usage"`
	StartedAt        string    `json:"started_at"`
	EndedAt          string    `json:"ended_at,omitempty"`
	Error            string    `json:"error,omitempty"`
}

type TasksOutput struct {
	Tasks []Task `json:"tasks"`
}

type KillOutput struct {
	Task Task `json:"task"`
	// RolledBack is true once the dream acknowledged the kill.
	RolledBack bool `json:"rolled_back"`
}

type Entry struct {
	ID        string         `json:"id"`
	Kind      string         `json:"kind"`
	Status    string         `json:"status"`
	StartedAt string         `json:"started_at"`
	Commit    string         `json:"commit"`
	Files     []dream.Change `json:"files"`
	Diff      string         `json:"diff,omitempty"`
}

type LogOutput struct {
	MemoryDir string  `json:"memory_dir"`
	Entries   []Entry `json:"entries"`
}

type ShowOutput struct {
	MemoryDir string `json:"memory_dir"`
	Entry     Entry  `json:"entry"`
}

func (s *Server) addTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	mut := func(destructive bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{DestructiveHint: new(destructive), OpenWorldHint: new(false)}
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_status", Annotations: ro,
		Description: "Why a dream would or would not start now: each gate (enabled, time since the last consolidation, sessions since, the lock) and which opens next."}, s.status)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_run", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)},
		Description: "Run one dream now on the memory dir (skips the time and session gates, takes the lock), or, with job, one run of that job (health: the code health report; review: notes on recent commits), which writes only its own dir. Its changes are staged for review unless apply is true: read them with dream_diff, then dream_apply or dream_discard."}, s.run)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_diff", Annotations: ro,
		Description: "The unified diff of a dream: a staged one waiting for dream_apply, or one that already landed."}, s.diff)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_apply", Annotations: mut(false),
		Description: "Land the staged changes of a dream run for review; it is recorded in the audit history and can be undone with dream_undo. Refused for a dream the loss guard held and whenever the user's settings say review = true: those the user applies with `dream apply ID`."}, s.apply)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_discard", Annotations: mut(true),
		Description: "Drop the staged changes of a dream run for review; the memory is unchanged."}, s.discard)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_tasks", Annotations: ro,
		Description: "Running and recent dreams on this machine: status, phase, files touched, recent turns, tokens."}, s.tasks)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_kill", Annotations: mut(false),
		Description: "Stop a running dream, whichever process runs it; it rolls back and the memory is unchanged."}, s.kill)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_log", Annotations: ro,
		Description: "Past changes of the memory dir, newest first: dreams, applied reviews, undos and hand edits, with file stats (and diffs on request)."}, s.log)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_show", Annotations: ro,
		Description: "One past change of the memory dir with its full diff."}, s.show)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "dream_undo", Annotations: mut(false),
		Description: "Restore the memory to its state before a dream, as a new audited change; hand edits made since are kept. Refuses if later changes touched the same lines, unless force."}, s.undo)
}

// text is the short text beside a structured result.
func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func (s *Server) status(ctx context.Context, _ *mcp.CallToolRequest, in StatusInput) (*mcp.CallToolResult, StatusOutput, error) {
	mem, err := s.resolveMemoryDir(ctx, in.MemoryDir, "")
	if err != nil {
		return nil, StatusOutput{}, err
	}
	d, err := s.dreamer(mem)
	if err != nil {
		return nil, StatusOutput{}, err
	}
	defer d.Close()
	st, err := d.Status(ctx)
	if err != nil {
		return nil, StatusOutput{}, err
	}
	out := StatusOutput{MemoryDir: st.MemoryDir, Enabled: st.Enabled, SessionsTouchedSince: st.SessionsTouchedSince,
		MinHours: st.MinHours, MinSessions: st.MinSessions, LockHeld: st.Lock.Held, LockPID: st.Lock.PID, Next: st.Next,
		Gates: make([]Gate, 0, len(st.Gates)), Recovered: st.Recovered}
	if st.LastConsolidatedAt != nil {
		out.LastConsolidatedAt = st.LastConsolidatedAt.Format(time.RFC3339)
	}
	for _, g := range st.Gates {
		out.Gates = append(out.Gates, Gate(g))
	}
	out.Provider = s.opts.Provider
	if c, err := d.Estimate(ctx); err == nil {
		out.Cost = &c
	}
	msg := "every gate is open: a dream would start now"
	for _, g := range st.Gates {
		if !g.Open {
			msg = fmt.Sprintf("the %s gate is closed: %s", g.Name, g.Detail)
			break
		}
	}
	if out.Cost != nil && out.Cost.Estimate != nil {
		msg += "; a dream would cost " + out.Cost.Estimate.String()
	}
	if out.Cost != nil && out.Cost.Refusal != "" {
		msg += "; " + out.Cost.Refusal
	}
	return text("%s (%s)", msg, mem), out, nil
}

func (s *Server) refreshAfter(mem string) {
	if mem == s.opts.Base.MemoryDir {
		_ = s.refreshResources()
	}
}

func (s *Server) run(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, RunOutput, error) {
	review := !in.Apply || s.opts.Base.Settings.Review
	var mem string
	var cfg dream.Config
	var err error
	if in.Job != "" && in.Job != jobs.Memory {
		cfg, err = s.jobConfig(in.Job)
		mem, review = cfg.MemoryDir, !in.Apply || cfg.Settings.Review
	} else if mem, err = s.resolveMemoryDir(ctx, in.MemoryDir, ""); err == nil {
		cfg, err = s.config(mem)
	}
	if err != nil {
		return nil, RunOutput{}, err
	}
	cfg.OnDone = nil
	// Progress notifications for clients that asked for them.
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		n := 0
		cfg.OnProgress = func(_ string, p dream.Progress) {
			if p.Kind != dream.ProgressTurn || p.Text == "" {
				return
			}
			n++
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: p.Text})
		}
	} else {
		cfg.OnProgress = nil
	}
	d, err := dream.New(cfg)
	if err != nil {
		return nil, RunOutput{}, err
	}
	defer d.Close()
	// The user's review setting wins over a model's apply: a policy set
	// in config.toml is not the model's to lift.
	dctx, stop := s.dreamContext(ctx)
	defer stop()
	rep, err := d.Run(dctx, dream.RunOptions{Review: review})
	defer s.refreshAfter(mem)
	if err != nil {
		if errors.Is(err, dream.ErrLockHeld) {
			return nil, RunOutput{}, fmt.Errorf("%v; see dream_tasks for the running dream, or try again later", err)
		}
		id := ""
		if rep.TaskID != "" {
			id = " " + rep.TaskID
		}
		return nil, RunOutput{}, fmt.Errorf("dream%s %s and was rolled back: the memory is unchanged: %v", id, rep.Status, err)
	}
	out := RunOutput{TaskID: rep.TaskID, Status: rep.Status, MemoryDir: mem, Staged: rep.Status == dream.StatusStaged,
		FilesTouched: nonNil(rep.FilesTouched), Changes: changes(rep.Changes), Turns: rep.Turns, ToolCalls: rep.ToolCalls,
		Usage: rep.Usage, Summary: rep.Summary, AuditCommit: rep.AuditCommit, DurationMS: rep.DurationMS}
	switch {
	case len(rep.Changes) == 0:
		return text("dream %s %s and changed nothing: %s", rep.TaskID, rep.Status, rep.Summary), out, nil
	case out.Staged && in.Apply:
		return text("dream %s staged %d change(s) for review although apply was asked (review = true in the user's settings): read them with dream_diff id=%s, then dream_apply or dream_discard",
			rep.TaskID, len(rep.Changes), rep.TaskID), out, nil
	case out.Staged:
		return text("dream %s staged %d change(s) for review (%s): read them with dream_diff id=%s, then dream_apply or dream_discard",
			rep.TaskID, len(rep.Changes), strings.Join(rep.FilesTouched, ", "), rep.TaskID), out, nil
	}
	return text("dream %s completed: %d file(s) changed (%s); undo with dream_undo id=%s", rep.TaskID, len(rep.Changes), strings.Join(rep.FilesTouched, ", "), rep.TaskID), out, nil
}

// jobConfig is the Dreamer configuration of the job named name on the
// server's repository (Options.Jobs), with the server's memory and
// transcripts for its read scope and session gate.
func (s *Server) jobConfig(name string) (dream.Config, error) {
	var all []jobs.Job
	if s.opts.Jobs != nil {
		all = s.opts.Jobs()
	}
	j, ok := jobs.Find(all, name)
	if !ok {
		return dream.Config{}, fmt.Errorf("no job %q here: the jobs are %s", name, strings.Join(jobs.Names(all), ", "))
	}
	base := s.opts.Base
	// Base's Runner and edit guard are the memory dream's: a job's runner
	// comes from the backend.
	base.Settings, base.Job, base.CheckEdit, base.Runner = j.Settings.Dream, j.Spec, nil, nil
	p := host.Project{MemoryDir: base.MemoryDir, Host: s.opts.Host, SessionsDir: base.SessionsDir, RepoDir: s.opts.Repo}
	return hostcfg.For(p, s.opts.Backend, base, s.opts.Home, s.opts.Env)
}

func (s *Server) diff(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, DiffOutput, error) {
	d, cfg, err := s.dreamerFor(ctx, in.MemoryDir, in.ID)
	if err != nil {
		return nil, DiffOutput{}, err
	}
	defer d.Close()
	mem := cfg.MemoryDir
	dd, err := d.Diff(ctx, in.ID)
	if err != nil {
		return nil, DiffOutput{}, fmt.Errorf("%v (dream_tasks and dream_log list the ids)", err)
	}
	out := DiffOutput{ID: dd.ID, MemoryDir: mem, Source: dd.Source, Status: dd.Status, Changes: changes(dd.Changes), Diff: dd.Diff, Units: dd.Units, ParkReason: dd.ParkReason}
	next := "it already landed; dream_undo reverts it"
	if dd.Source == dream.DiffStaged {
		next = "it is staged: dream_apply lands it, dream_discard drops it"
	}
	return text("dream %s changes %d file(s); %s", dd.ID, len(dd.Changes), next), out, nil
}

func (s *Server) apply(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, ApplyOutput, error) {
	d, cfg, err := s.dreamerFor(ctx, in.MemoryDir, in.ID)
	if err != nil {
		return nil, ApplyOutput{}, err
	}
	defer d.Close()
	mem := cfg.MemoryDir
	// A hold is the user's to lift, not the model's: a dream the loss
	// guard held, or any staged dream while the user's settings say
	// review = true, is applied only by the user at the command line.
	staged, err := d.Diff(ctx, in.ID)
	if err != nil {
		return nil, ApplyOutput{}, fmt.Errorf("applying %s: %v (dream_tasks lists the staged dreams)", in.ID, err)
	}
	reason := staged.ParkReason
	switch {
	case staged.Source != dream.DiffStaged:
		return nil, ApplyOutput{}, fmt.Errorf("dream %s is not staged: it landed already (dream_log shows it)", in.ID)
	case strings.HasPrefix(reason, dream.ParkLossGuard):
		return nil, ApplyOutput{}, fmt.Errorf("dream %s is held for the user's review (%s): it is not for a model to apply; ask the user to read it with `dream diff %s` and run `dream apply %s` themselves", in.ID, reason, in.ID, in.ID)
	case s.opts.Base.Settings.Review || cfg.Settings.Review:
		return nil, ApplyOutput{}, fmt.Errorf("the user's settings say review = true: staged dreams are applied by the user, not a model; ask the user to read it with `dream diff %s` and run `dream apply %s` themselves", in.ID, in.ID)
	}
	cs, commit, err := d.Apply(ctx, in.ID)
	defer s.refreshAfter(mem)
	if err != nil {
		return nil, ApplyOutput{}, fmt.Errorf("applying %s: %v", in.ID, err)
	}
	return text("applied %s: %d file(s) changed; undo with dream_undo id=%s", in.ID, len(cs), in.ID),
		ApplyOutput{ID: in.ID, MemoryDir: mem, Changes: changes(cs), AuditCommit: commit}, nil
}

func (s *Server) discard(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, DiscardOutput, error) {
	d, cfg, err := s.dreamerFor(ctx, in.MemoryDir, in.ID)
	if err != nil {
		return nil, DiscardOutput{}, err
	}
	defer d.Close()
	mem := cfg.MemoryDir
	if err := d.Discard(in.ID); err != nil {
		return nil, DiscardOutput{}, fmt.Errorf("discarding %s: %v (dream_diff with no staged run lists nothing to discard)", in.ID, err)
	}
	return text("discarded the staged changes of %s; the memory is unchanged", in.ID), DiscardOutput{ID: in.ID, MemoryDir: mem, Discarded: true}, nil
}

func (s *Server) tasks(_ context.Context, _ *mcp.CallToolRequest, in TasksInput) (*mcp.CallToolResult, TasksOutput, error) {
	reg, err := task.Open(s.opts.Base.StateDir)
	if err != nil {
		return nil, TasksOutput{}, err
	}
	ts, err := reg.List()
	if err != nil {
		return nil, TasksOutput{}, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	out := TasksOutput{Tasks: []Task{}}
	running := 0
	for _, t := range ts {
		if t.Status == task.StatusRunning {
			running++
		} else if in.RunningOnly {
			continue
		}
		if len(out.Tasks) < limit {
			out.Tasks = append(out.Tasks, taskOf(t))
		}
	}
	return text("%d dream(s) running, %d listed", running, len(out.Tasks)), out, nil
}

func (s *Server) kill(ctx context.Context, _ *mcp.CallToolRequest, in KillInput) (*mcp.CallToolResult, KillOutput, error) {
	wait := time.Duration(in.WaitSeconds) * time.Second
	if in.WaitSeconds <= 0 {
		wait = 10 * time.Second
	}
	wait = min(wait, time.Minute)
	if err := checkInput("", in.ID); err != nil {
		return nil, KillOutput{}, err
	}
	reg, err := task.Open(s.opts.Base.StateDir)
	if err != nil {
		return nil, KillOutput{}, err
	}
	e, err := reg.KillWait(ctx, in.ID, wait)
	if errors.Is(err, task.ErrFinished) {
		return text("%s already %s; nothing to kill", e.ID, e.Status), KillOutput{Task: taskOf(e)}, nil
	}
	if err != nil {
		return nil, KillOutput{}, fmt.Errorf("killing %s: %v (dream_tasks lists running dreams)", in.ID, err)
	}
	out := KillOutput{Task: taskOf(e), RolledBack: e.Status != task.StatusRunning}
	switch {
	case e.Status == task.StatusKilled:
		return text("%s killed and rolled back; the memory is unchanged", e.ID), out, nil
	case e.Status == task.StatusRunning:
		return text("asked %s to stop; it has not finished yet (check dream_tasks)", e.ID), out, nil
	}
	return text("%s finished as %s before the kill landed (see dream_log)", e.ID, e.Status), out, nil
}

func (s *Server) log(ctx context.Context, _ *mcp.CallToolRequest, in LogInput) (*mcp.CallToolResult, LogOutput, error) {
	mem, err := s.resolveMemoryDir(ctx, in.MemoryDir, "")
	if err != nil {
		return nil, LogOutput{}, err
	}
	d, err := s.dreamer(mem)
	if err != nil {
		return nil, LogOutput{}, err
	}
	defer d.Close()
	limit := in.Limit
	if limit <= 0 {
		limit = 10
	}
	es, err := d.Log(ctx, limit)
	if err != nil {
		return nil, LogOutput{}, err
	}
	out := LogOutput{MemoryDir: mem, Entries: []Entry{}}
	for _, e := range es {
		ent := entry(e)
		if !in.IncludeDiff {
			ent.Diff = ""
		}
		out.Entries = append(out.Entries, ent)
	}
	return text("%d change(s) of %s, newest first; dream_show id=... has a full diff", len(out.Entries), mem), out, nil
}

func (s *Server) show(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, ShowOutput, error) {
	d, cfg, err := s.dreamerFor(ctx, in.MemoryDir, in.ID)
	if err != nil {
		return nil, ShowOutput{}, err
	}
	defer d.Close()
	mem := cfg.MemoryDir
	e, err := d.Show(ctx, in.ID)
	if err != nil {
		return nil, ShowOutput{}, fmt.Errorf("%v (dream_log lists the ids)", err)
	}
	return text("%s %s %s: %d file(s)", e.Kind, e.ID, e.Status, len(e.Files)), ShowOutput{MemoryDir: mem, Entry: entry(e)}, nil
}

func (s *Server) undo(ctx context.Context, _ *mcp.CallToolRequest, in UndoInput) (*mcp.CallToolResult, ShowOutput, error) {
	d, cfg, err := s.dreamerFor(ctx, in.MemoryDir, in.ID)
	if err != nil {
		return nil, ShowOutput{}, err
	}
	defer d.Close()
	mem := cfg.MemoryDir
	e, err := d.Undo(ctx, in.ID, in.Force)
	defer s.refreshAfter(mem)
	if err != nil {
		return nil, ShowOutput{}, fmt.Errorf("undoing %s: %v", in.ID, err)
	}
	return text("undid %s: %d file(s) restored, recorded as %s", in.ID, len(e.Files), e.ID), ShowOutput{MemoryDir: mem, Entry: entry(e)}, nil
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// changes is never nil, so the JSON shows [].
func changes(cs []dream.Change) []dream.Change {
	if cs == nil {
		return []dream.Change{}
	}
	return cs
}

func taskOf(t task.Entry) Task {
	out := Task{ID: t.ID, Status: string(t.Status), Phase: string(t.Phase), MemoryDir: t.MemoryDir, PID: t.PID, Review: t.Review,
		SessionsReviewed: t.SessionsReviewed, FilesTouched: nonNil(t.FilesTouched), RecentTurns: nonNil(t.Turns), ToolCalls: t.ToolCalls,
		Usage: t.Usage, StartedAt: t.StartedAt.Format(time.RFC3339), Error: t.Error}
	if t.EndedAt != nil {
		out.EndedAt = t.EndedAt.Format(time.RFC3339)
	}
	return out
}

func entry(e dream.HistoryEntry) Entry {
	out := Entry{ID: e.ID, Kind: e.Kind, Status: e.Status, StartedAt: e.StartedAt.Format(time.RFC3339), Commit: e.Commit, Files: e.Files, Diff: e.Diff}
	if out.Files == nil {
		out.Files = []dream.Change{}
	}
	return out
}
