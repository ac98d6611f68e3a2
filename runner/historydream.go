package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/providername"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// HistoryDream is the Runner of nanobot's flow: the history backlog
// drained batch after batch (nanobot.RunDream) on the Dreamer's staging copy
// of the workspace, with the dream cursor written into that copy, so that it
// advances exactly when the dream's edits land.
type HistoryDream struct {
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

// Run implements dream.Runner.
func (r *HistoryDream) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	if r.Provider == nil {
		return dream.Outcome{}, errors.New("runner: the nanobot history dream needs a model (set a provider); the offline engine cannot read history")
	}
	res, err := nanobot.RunDream(ctx, nanobot.DreamConfig{
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
			job.Progress(dream.Progress{Kind: dream.ProgressKind(e.Kind), Turn: e.Turn, Text: e.Text, Tool: e.Tool, Path: e.Path, IsError: e.IsError, Usage: e.Usage})
		},
		Budget: job.Budget,
	})
	out := dream.Outcome{Turns: res.Turns, ToolCalls: res.ToolCalls, Usage: res.Usage, FilesTouched: res.FilesTouched, Shown: res.Shown, Citations: res.Citations}
	out.Summary = fmt.Sprintf("history dream: %d entr%s in %d batch(es), dream cursor %d -> %d", res.Consumed, plural(res.Consumed, "y", "ies"), res.Batches, res.StartCursor, res.Cursor)
	return out, err
}

// Estimate implements dream.Estimator: the batches Run would send over
// the history not yet consumed.
func (r *HistoryDream) Estimate(ctx context.Context, job dream.Job) (spend.Estimate, error) {
	if r.Provider == nil {
		return spend.Estimate{}, errors.New("runner: the nanobot history dream needs a model")
	}
	c := nanobot.DefaultCounter()
	u, n, err := nanobot.EstimateDream(ctx, nanobot.DreamConfig{Workspace: job.MemoryDir, DisplayWorkspace: job.MemoryDisplayDir, SessionsDir: job.SessionsDir, BatchSize: r.BatchSize, Template: r.Template},
		func(s string) int64 { return int64(c.Count(s)) }, r.Provider.Name() == providername.Anthropic)
	if err != nil {
		return spend.Estimate{}, err
	}
	batch := r.BatchSize
	if batch <= 0 {
		batch = nanobot.DreamBatchSize
	}
	return spend.Estimate{Provider: r.Provider.Name(), Model: r.Model, Requests: n, Parts: 1, Usage: u,
		Basis: fmt.Sprintf("%s: the unconsumed history in batches of %d, each with SOUL.md, USER.md and memory/MEMORY.md", c.Name(), batch)}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
