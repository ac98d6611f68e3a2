package dream

import (
	"context"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/agent"
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
		o, err := runOffline(ctx, job, now())
		if err != nil {
			return out, err
		}
		out.FilesTouched = o.FilesTouched
	}
	leads, err := offline.FindLeads(ctx, job.MemoryDir, job.RepoDir)
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
	taskText, err := prompt.Task(prompt.TaskData{Today: now().Format("2006-01-02"), SessionsReviewed: job.SessionsReviewed, Leads: leads.Markdown(40), Pinned: job.Pinned})
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
	// Now is the clock for resolving relative dates; nil means time.Now.
	Now func() time.Time
}

// Run implements Runner.
func (r *OfflineRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	return runOffline(ctx, job, now())
}

func runOffline(ctx context.Context, job Job, now time.Time) (Outcome, error) {
	rep, err := offline.Run(ctx, offline.Options{MemoryDir: job.MemoryDir, RepoDir: job.RepoDir, Now: now})
	if err != nil {
		return Outcome{}, fmt.Errorf("offline engine: %w", err)
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
	if leads, err := offline.FindLeads(ctx, job.MemoryDir, job.RepoDir); err == nil {
		for _, s := range leads.DriftSuspects {
			job.Progress(Progress{Kind: ProgressTurn, Text: fmt.Sprintf("lead: %s:%d names %s %q, which the repository no longer has", s.File, s.Line, s.Kind, s.Mention)})
		}
		for _, p := range leads.NearDuplicates {
			job.Progress(Progress{Kind: ProgressTurn, Text: fmt.Sprintf("lead: %s:%d and %s:%d say almost the same (%.0f%% alike)", p.A.File, p.A.Line, p.B.File, p.B.Line, 100*p.Similarity)})
		}
		if n := len(leads.DriftSuspects) + len(leads.NearDuplicates); n > 0 {
			summary += fmt.Sprintf("; %d lead(s) need judgement: a model dream gets them in its task", n)
		}
	}
	return Outcome{FilesTouched: rep.FilesTouched, Summary: summary}, nil
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
