package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/offline"
	"github.com/dreamkit/dream/internal/prompt"
	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
)

// Agent is the model-driven dream: the zero-token offline hygiene
// first, then a restricted sub-agent with the six sandboxed tools, its own
// context and the four-phase consolidation prompt, with the offline engine's
// leads (near-duplicates, drift suspects) in its task so that it spends its
// turns on judgement rather than search.
type Agent struct {
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

// Run implements dream.Runner.
func (r *Agent) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	if r.Provider == nil {
		return dream.Outcome{}, fmt.Errorf("runner: Agent has no provider")
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	var out dream.Outcome
	if !r.SkipOffline {
		o, err := runOffline(ctx, job, now(), r.Host, r.StateDir)
		if err != nil {
			return out, err
		}
		out.FilesTouched, out.Accounted = o.FilesTouched, o.Accounted
	}
	lo := offline.Options{MemoryDir: job.MemoryDir, RepoDir: job.RepoDir, Layout: offline.LayoutFor(r.Host)}
	leads, err := offline.FindLeadsWith(ctx, lo)
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
			job.Progress(dream.Progress{Kind: dream.ProgressKind(e.Kind), Turn: e.Turn, Text: e.Text, Tool: e.Tool, Path: e.Path, IsError: e.IsError, Usage: e.Usage})
		},
	})
	out.Turns, out.ToolCalls, out.Usage, out.Summary = res.Turns, res.ToolCalls, res.Usage, res.Summary
	out.FilesTouched = appendUnique(out.FilesTouched, res.FilesTouched...)
	return out, err
}

// ReplacesFiles implements dream.FileReplacer: the offline engine and the
// sandbox's write and edit tools both replace files atomically.
func (*Agent) ReplacesFiles() bool { return true }

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
