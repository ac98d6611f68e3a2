package dream

import (
	"context"

	"github.com/dreamkit/dream/internal/lossguard"
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
