package dream

import (
	"context"
	"time"

	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/lossguard"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/llm"
)

// Runner does the work under the lock: the one-method interface between the
// Dreamer (gates, lock, journal, audit, tasks) and whatever consolidates the
// memory (a model-driven agent, the offline engine, or a host's own job).
// The Dreamer owns everything around the run; a Runner only ever sees a
// staging copy of the memory, so it cannot leave a half-done change behind.
type Runner interface {
	Run(ctx context.Context, job Job) (Outcome, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, job Job) (Outcome, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, job Job) (Outcome, error) { return f(ctx, job) }

// Job is one dream's assignment.
type Job struct {
	// TaskID identifies the dream in the task registry and the audit log.
	TaskID string
	// MemoryDir is the staging the runner reads and writes: a full view
	// of the memory (linked, for a FileReplacer, or copied).
	MemoryDir string
	// MemoryDisplayDir is the user's real memory dir: the path a model is
	// shown, so that prompts stay identical from one dream to the next.
	MemoryDisplayDir string
	// RepoDir is the code the memory describes (read-only).
	RepoDir string
	// SessionsDir holds the host's transcripts (read-only); may be empty.
	SessionsDir string
	// SessionsReviewed is the number of transcripts touched since the last
	// consolidation, for the prompt and the task entry.
	SessionsReviewed int
	// Pinned are facts that must survive the dream verbatim: the
	// configured ones and those pinned by a marker in a memory file.
	Pinned []string
	// Progress receives the run's events; never nil.
	Progress func(Progress)
	// Budget, set for a runner that is an Estimator, must be asked before
	// each model request with the usage so far and the request's input
	// (an upper bound; what re-sends the previous request as
	// CacheReadInputTokens when the provider has been reading it from its
	// cache, the rest as InputTokens): it returns the most output tokens
	// the request may ask for, or an error (matching ErrOverBudget) that
	// stops the dream before it sends the request. nil: no ceiling but
	// the runner's own.
	Budget func(used, next llm.Usage) (maxOutput int, err error)

	// Spec is the job this dream runs (Config.Job): its name, its scopes
	// (RepoDir and SessionsDir above are empty when it may not read them)
	// and what it does. The zero Spec is the memory dream.
	Spec jobs.Spec
	// Budgets are the dream's limits, from its Settings.
	Budgets Budgets
	// LastRun is when the job last completed (the lock's time before this
	// dream); zero when it never did.
	LastRun time.Time
	// Previous is the record of the dream before this one on the same
	// memory, for a memory dream to check: what it changed (its files and
	// diff) or what it staged for review and why. Read-only, one level
	// deep (never its transcript, never an older dream); "" when there is
	// none or for another job.
	Previous string
}

// Budgets are a dream's limits, as its Settings set them: a Runner that
// talks to a model keeps within them (the Dreamer enforces the timeout).
// The spending ceilings are not among them: an Estimator's dream is held
// to them by Job.Budget.
type Budgets struct {
	MaxTurns  int
	MaxTokens int64
	Timeout   time.Duration
}

// ProgressKind names a progress event.
type ProgressKind string

const (
	// ProgressTurn: a model turn finished; Text summarises it.
	ProgressTurn ProgressKind = "turn"
	// ProgressToolCall: a tool was called.
	ProgressToolCall ProgressKind = "tool_call"
	// ProgressFileTouched: a memory file was written successfully.
	ProgressFileTouched ProgressKind = "file_touched"
	// ProgressUsage: the cumulative token usage changed.
	ProgressUsage ProgressKind = "usage"
)

// Progress is one event from a running dream.
type Progress struct {
	Kind    ProgressKind `json:"kind"`
	Turn    int          `json:"turn,omitempty"`
	Text    string       `json:"text,omitempty"`
	Tool    string       `json:"tool,omitempty"`
	Path    string       `json:"path,omitempty"`
	IsError bool         `json:"is_error,omitempty"`
	Usage   llm.Usage    `json:"usage"`
}

// Outcome is what a runner reports back.
type Outcome struct {
	Turns        int
	ToolCalls    int
	Usage        llm.Usage
	FilesTouched []string
	Summary      string
	// Accounted names the bytes the runner changed on purpose (the offline
	// engine's fix records), for the loss guard.
	Accounted []Accounted
	// Strict asks the loss guard to fail the dream if any changed unit is
	// not in Accounted: set by a runner that only makes recorded fixes.
	Strict bool
	// Incomplete says why the runner stopped before it finished its work
	// (a part of a large memory that ran out of context): what it did is
	// staged for review, never landed by itself.
	Incomplete string
	// Found counts what a job found, by kind (outdated dependencies, TODO
	// comments ...), for its telemetry.
	Found map[string]int

	// A model runner's evidence for the values its dream changes (see
	// Report.Units): what its tools showed the model from transcripts and
	// repository files, what its own checks found untrue in memory (paths
	// and names the repository no longer has), and the model's citations.
	// The Dreamer checks each against the others; a changed value nothing
	// here supports is held for review.
	Shown          []evidence.Shown
	Contradictions []evidence.Contradiction
	Citations      []evidence.Citation

	// Index is the memory's index as its agent loads it once the runner
	// is done; nil when the layout has no index.
	Index *IndexBudget
}

// IndexBudget is the memory's index as its agent loads it: counted as that
// agent counts (Agent names it and the version the rule was read from),
// and whether the agent cuts part of it off. A dream that could not bring
// the index within the limit says so here, whatever else it changed.
type IndexBudget struct {
	File  string `json:"file"`
	Lines int    `json:"lines"`
	// Size and MaxSize are in SizeUnit, the agent's: "bytes", or "UTF-16
	// code units" (JavaScript's string length) for Claude Code.
	Size       int    `json:"size"`
	MaxLines   int    `json:"max_lines"`
	MaxSize    int    `json:"max_size,omitempty"`
	SizeUnit   string `json:"size_unit"`
	OverBudget bool   `json:"over_budget"`
	Agent      string `json:"agent"`
	// Rule says what the agent counts and where that was read.
	Rule    string `json:"rule"`
	Message string `json:"message,omitempty"`
}

// Accounted names bytes of a memory file, as it was before the dream, that
// a runner changed on purpose (an offline fix): the loss guard does not
// count them as lost.
type Accounted struct {
	// File is slash-separated, relative to the memory dir.
	File string
	// Start and End are byte offsets, End exclusive.
	Start, End int
}

// lossRecords converts Accounted for the loss guard.
func (o Outcome) lossRecords() []lossguard.Record {
	if o.Accounted == nil {
		return nil
	}
	out := make([]lossguard.Record, 0, len(o.Accounted))
	for _, a := range o.Accounted {
		out = append(out, lossguard.Record{File: a.File, Start: a.Start, End: a.End})
	}
	return out
}
