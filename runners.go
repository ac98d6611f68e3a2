package dream

import (
	"context"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/memory"
	"github.com/dreamkit/dream/internal/offline"
	"github.com/dreamkit/dream/internal/prompt"
	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
)

// AgentRunner is the model-driven dream: the zero-token offline hygiene
// first, then a restricted sub-agent with the six sandboxed tools, its own
// context and the four-phase consolidation prompt, with the offline engine's
// leads (near-duplicates, drift suspects) in its task so that it spends its
// turns on judgement rather than search.
type AgentRunner struct {
	Provider        llm.Provider
	Model           string
	MaxTurns        int
	MaxTokens       int64
	MaxOutputTokens int
	// SkipOffline leaves the mechanical fixes to the model.
	SkipOffline bool
	// Now is the clock for resolving relative dates; nil means time.Now.
	Now func() time.Time
	// Host is the agent whose layout says which file is an index (see
	// offline.LayoutFor); empty is Claude Code's.
	Host string
	// StateDir holds the audit history, which dates lines for the offline
	// hygiene; empty reads no history.
	StateDir string
}

// Run implements Runner.
func (r *AgentRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	if r.Provider == nil {
		return Outcome{}, fmt.Errorf("dream: AgentRunner has no provider")
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	var out Outcome
	if !r.SkipOffline {
		o, err := runOffline(ctx, job, now(), r.Host, r.StateDir)
		if err != nil {
			return out, err
		}
		out.FilesTouched, out.Accounted = o.FilesTouched, o.Accounted
	}
	leads, err := offline.FindLeadsWith(ctx, offline.Options{MemoryDir: job.MemoryDir, RepoDir: job.RepoDir, Layout: offline.LayoutFor(r.Host)})
	if err != nil {
		return out, fmt.Errorf("finding leads: %w", err)
	}
	set, err := tools.NewSet(tools.Env{MemoryDir: job.MemoryDir, MemoryDisplayDir: job.MemoryDisplayDir, RepoDir: job.RepoDir, SessionsDir: job.SessionsDir})
	if err != nil {
		return out, fmt.Errorf("opening the tool sandbox: %w", err)
	}
	defer set.Close()
	system, err := prompt.System(prompt.SystemData{MemoryDir: job.MemoryDisplayDir, RepoDir: job.RepoDir, SessionsDir: job.SessionsDir})
	if err != nil {
		return out, err
	}
	taskText, err := prompt.Task(prompt.TaskData{Today: now().Format("2006-01-02"), SessionsReviewed: job.SessionsReviewed, Leads: leads.Markdown(offline.LeadsPromptBytes), Pinned: job.Pinned})
	if err != nil {
		return out, err
	}
	res, err := agent.Run(ctx, agent.Config{
		Provider:        r.Provider,
		Model:           r.Model,
		MaxOutputTokens: r.MaxOutputTokens,
		System:          system,
		Task:            taskText,
		Tools:           set.Tools(),
		MaxTurns:        r.MaxTurns,
		MaxTokens:       r.MaxTokens,
		OnEvent: func(e agent.Event) {
			job.Progress(Progress{Kind: ProgressKind(e.Kind), Turn: e.Turn, Text: e.Text, Tool: e.Tool, Path: e.Path, IsError: e.IsError, Usage: e.Usage})
		},
	})
	out.Turns, out.ToolCalls, out.Usage, out.Summary = res.Turns, res.ToolCalls, res.Usage, res.Summary
	out.FilesTouched = appendUnique(out.FilesTouched, res.FilesTouched...)
	return out, err
}

// OfflineRunner is the zero-token dream: only what is mechanical and
// certain (exact duplicates, relative dates, dangling pointers, unindexed
// topics, an index over budget). It sends nothing anywhere.
type OfflineRunner struct {
	// Now is the clock of the run; nil means time.Now. Relative dates are
	// resolved from when their lines were written, never from this.
	Now func() time.Time
	// Host is the agent whose layout says which file is an index (see
	// offline.LayoutFor); empty is Claude Code's.
	Host string
	// StateDir holds the audit history, which dates lines; empty reads no
	// history.
	StateDir string
}

// Run implements Runner.
func (r *OfflineRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	out, err := runOffline(ctx, job, now(), r.Host, r.StateDir)
	out.Strict = true // the engine may change only what its fixes name
	return out, err
}

func runOffline(ctx context.Context, job Job, now time.Time, host, stateDir string) (Outcome, error) {
	// The staging copy holds regular files only: a linked memory file
	// would look missing there, so it is refused here, with what to do.
	if job.MemoryDisplayDir != "" {
		if err := memory.CheckSymlinks(job.MemoryDisplayDir); err != nil {
			return Outcome{}, fmt.Errorf("offline engine: %w", err)
		}
	}
	tr, err := offline.LoadTranscripts(ctx, job.SessionsDir)
	if err != nil {
		return Outcome{}, fmt.Errorf("offline engine: %w", err)
	}
	// Provenance, in order: the transcript call that wrote a line, then the
	// audit history's one-day windows (a dated heading comes first of all).
	var prov offline.Provenance = tr
	if ap := newAuditProvenance(ctx, stateDir, job.MemoryDisplayDir); ap != nil {
		prov = offline.Chain{tr, ap}
	}
	opts := offline.Options{MemoryDir: job.MemoryDir, RepoDir: job.RepoDir, Now: now, Layout: offline.LayoutFor(host), Provenance: prov, Leads: true}
	rep, err := offline.Run(ctx, opts)
	if err != nil {
		return Outcome{}, fmt.Errorf("offline engine: %w", err)
	}
	var accounted []Accounted
	for _, f := range rep.Fixes {
		accounted = append(accounted, Accounted{File: f.File, Start: f.Start, End: f.End})
	}
	for _, f := range rep.Fixes {
		text := f.Kind + " " + f.File
		if f.Detail != "" {
			text += ": " + f.Detail
		}
		job.Progress(Progress{Kind: ProgressTurn, Text: text})
	}
	for _, p := range rep.FilesTouched {
		job.Progress(Progress{Kind: ProgressFileTouched, Path: p})
	}
	summary := fmt.Sprintf("offline engine: %d fix(es) in %d file(s)", len(rep.Fixes), len(rep.FilesTouched))
	// Judgement calls are left alone offline, but the user should know
	// they are there: they are what a model dream would be handed.
	for _, l := range rep.Leads {
		job.Progress(Progress{Kind: ProgressTurn, Text: fmt.Sprintf("lead: %s:%d %s: %s", l.File, l.Line, l.Kind, l.Detail)})
	}
	if leads := rep.Found; leads != nil {
		for _, p := range leads.CrossFileDuplicates {
			job.Progress(Progress{Kind: ProgressTurn, Text: fmt.Sprintf("lead: %s:%d and %s:%d hold the same text (a model dream decides whether it is one fact)", p.A.File, p.A.Line, p.B.File, p.B.Line)})
		}
		for _, r := range leads.DanglingPointers {
			job.Progress(Progress{Kind: ProgressTurn, Text: fmt.Sprintf("lead: %s:%d points to missing %s", r.File, r.Line, r.Text)})
		}
		for _, s := range leads.DriftSuspects {
			job.Progress(Progress{Kind: ProgressTurn, Text: fmt.Sprintf("lead: %s:%d names %s %q, which the repository no longer has", s.File, s.Line, s.Kind, s.Mention)})
		}
		for _, p := range leads.NearDuplicates {
			job.Progress(Progress{Kind: ProgressTurn, Text: fmt.Sprintf("lead: %s:%d and %s:%d say almost the same (%.0f%% alike)", p.A.File, p.A.Line, p.B.File, p.B.Line, 100*p.Similarity)})
		}
		if n := leads.Count(); n > 0 {
			summary += fmt.Sprintf("; %d lead(s) need judgement: a model dream gets them in its task", n)
		}
	}
	return Outcome{FilesTouched: rep.FilesTouched, Summary: summary, Accounted: accounted}, nil
}

func appendUnique(dst []string, add ...string) []string {
	seen := make(map[string]bool, len(dst))
	for _, s := range dst {
		seen[s] = true
	}
	for _, s := range add {
		if !seen[s] {
			seen[s] = true
			dst = append(dst, s)
		}
	}
	return dst
}
