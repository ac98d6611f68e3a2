package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/llm"
)

// Task is one dream in the task registry, as `dream tasks --json` prints it:
// running ones report their phase, turns, tool calls and usage as they go.
type Task struct {
	ID        string     `json:"id"`
	Status    TaskStatus `json:"status"`
	Phase     TaskPhase  `json:"phase"`
	MemoryDir string     `json:"memory_dir"`
	// PID is the process that runs (or ran) the dream.
	PID      int    `json:"pid"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// ProviderWhy says why that provider (a setting, a key given to
	// dream, offline because a key was only inherited); Estimate is what
	// a model dream was expected to cost.
	ProviderWhy      string  `json:"provider_why,omitempty"`
	Estimate         *Amount `json:"estimate,omitempty"`
	SessionsReviewed int     `json:"sessions_reviewed"`
	// FilesTouched names at most 100 of the files touched;
	// FilesTouchedTotal counts all of them.
	FilesTouched      []string `json:"files_touched"`
	FilesTouchedTotal int      `json:"files_touched_total"`
	// Turns are the summaries of the last 30 model turns.
	Turns     []string   `json:"turns"`
	ToolCalls int        `json:"tool_calls"`
	Usage     llm.Usage  `json:"usage"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Error     string     `json:"error,omitempty"`
	Review    bool       `json:"review,omitempty"`
	// Job names the job the dream ran (empty: the memory dream), and
	// Doing what it does ("doing a code checkup").
	Job   string `json:"job,omitempty"`
	Doing string `json:"doing,omitempty"`
}

// TaskStatus is where a dream is in its life.
type TaskStatus string

// Task status values, as Task.Status holds them.
const (
	TaskRunning   TaskStatus = TaskStatus(task.StatusRunning)
	TaskCompleted TaskStatus = TaskStatus(task.StatusCompleted)
	TaskFailed    TaskStatus = TaskStatus(task.StatusFailed)
	TaskKilled    TaskStatus = TaskStatus(task.StatusKilled)
)

// TaskPhase is a running dream's progress: "starting" until its first
// successful write, then "updating", never back.
type TaskPhase string

// taskOf converts a registry entry at the API's boundary.
func taskOf(e task.Entry) Task {
	return Task{ID: e.ID, Status: TaskStatus(e.Status), Phase: TaskPhase(e.Phase), MemoryDir: e.MemoryDir, PID: e.PID,
		Provider: e.Provider, Model: e.Model, ProviderWhy: e.ProviderWhy, Estimate: e.Estimate, SessionsReviewed: e.SessionsReviewed, FilesTouched: e.FilesTouched,
		FilesTouchedTotal: e.FilesTouchedTotal, Turns: e.Turns, ToolCalls: e.ToolCalls, Usage: e.Usage,
		StartedAt: e.StartedAt, EndedAt: e.EndedAt, Error: e.Error, Review: e.Review, Job: e.Job, Doing: e.Doing}
}

// Errors of the task API, for errors.Is.
var (
	// ErrTaskNotFound: no task has that id (or unique prefix).
	ErrTaskNotFound = task.ErrNotFound
	// ErrTaskAmbiguous: the prefix matches more than one task.
	ErrTaskAmbiguous = task.ErrAmbiguous
	// ErrTaskFinished: the task already ended; there is nothing to kill.
	ErrTaskFinished = task.ErrFinished
	// ErrKilled is the cancellation cause that makes a running dream end
	// as killed (rolled back) rather than failed: a supervisor that owns a
	// dream's context, such as the daemon shutting down, cancels it with
	// context.WithCancelCause and this error.
	ErrKilled = errKilled
)

// Tasks lists the dreams recorded under stateDir: running ones first, then
// finished ones, newest first. A running entry whose process died is
// reported (and recorded) as failed.
func Tasks(stateDir string) ([]Task, error) {
	reg, err := task.Open(stateDir)
	if err != nil {
		return nil, err
	}
	entries, err := reg.List()
	out := make([]Task, 0, len(entries))
	for _, e := range entries {
		out = append(out, taskOf(e))
	}
	return out, err
}

// GetTask returns one task by id or unique prefix.
func GetTask(stateDir, id string) (Task, error) {
	reg, err := task.Open(stateDir)
	if err != nil {
		return Task{}, err
	}
	e, err := reg.Get(id)
	return taskOf(e), err
}

// KillTask asks the process running task id, whichever it is, to stop, and
// waits up to wait (0: do not wait) for it to acknowledge; a killed dream
// rolls back, so the returned entry's status is killed when the memory is
// unchanged. A task that already ended returns its entry and
// ErrTaskFinished. A dream that has not acknowledged within wait is
// returned still running, with a nil error: the kill stays requested.
func KillTask(ctx context.Context, stateDir, id string, wait time.Duration) (Task, error) {
	reg, err := task.Open(stateDir)
	if err != nil {
		return Task{}, err
	}
	killed, err := reg.Kill(id)
	e := taskOf(killed)
	if err != nil {
		return e, err
	}
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return e, ctx.Err()
		case <-tick.C:
		}
		cur, err := reg.Get(e.ID)
		if err != nil {
			return e, err
		}
		e = taskOf(cur)
		if e.Status != TaskRunning {
			return e, nil
		}
	}
	return e, nil
}

// ErrUnknownDream: neither the task registry, the event log nor the audit
// histories of the state dir know a dream by that id, so its memory dir is
// unknown.
var ErrUnknownDream = errors.New("dream: no dream with that id is known in this state dir")

// ErrNoSuchEntry: the audit history of the memory dir has no entry with
// that id (Show, Undo); matched with errors.Is.
var ErrNoSuchEntry = audit.ErrNotFound

// AmbiguousDreamError: the id (a prefix) names dreams of several memory
// dirs; the caller must say which memory dir it means. It matches
// ErrTaskAmbiguous.
type AmbiguousDreamError struct {
	ID         string
	MemoryDirs []string
}

func (e *AmbiguousDreamError) Error() string {
	return fmt.Sprintf("dream: %q matches dreams of %d memory dirs: %s", e.ID, len(e.MemoryDirs), strings.Join(e.MemoryDirs, ", "))
}

// Is makes errors.Is(err, ErrTaskAmbiguous) hold.
func (e *AmbiguousDreamError) Is(target error) bool { return target == ErrTaskAmbiguous }

// MemoryDirOf returns the memory dir dream id (or a unique prefix of it)
// belongs to, so that a caller holding only an id (`dream show ID`, an MCP
// client) can open the right Dreamer. Four records are asked, cheapest
// first, because each outlives something the previous one forgets: the task
// registry (every dream, staged and demo ones included, until pruned), the
// event log (every dream that started, never pruned), the staging of dreams
// parked for review (until applied or discarded), and the audit histories
// (every recorded change: undos and hand edits have no task, and a state
// dir copied without its log still has them).
func MemoryDirOf(ctx context.Context, stateDir, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("%w: empty id", ErrUnknownDream)
	}
	reg, err := task.Open(stateDir)
	if err != nil {
		return "", err
	}
	e, err := reg.Get(id)
	switch {
	case err == nil && e.MemoryDir != "":
		return e.MemoryDir, nil
	case errors.Is(err, task.ErrAmbiguous):
		// Several tasks: fine if they all worked on one memory dir, whose
		// own history then says which entries the prefix matches.
		entries, lerr := reg.List()
		if lerr != nil {
			return "", lerr
		}
		var dirs []string
		for _, t := range entries {
			if strings.HasPrefix(t.ID, id) && t.MemoryDir != "" {
				dirs = appendNew(dirs, filepath.Clean(t.MemoryDir))
			}
		}
		return oneMemoryDir(id, dirs, nil)
	}
	if dirs, err := memoryDirsInEvents(stateDir, id); err != nil || len(dirs) > 0 {
		return oneMemoryDir(id, dirs, err)
	}
	// The last two together: a prefix may match a staged dream of one
	// memory and recorded changes of another.
	dirs, err := journal.ParkedMemoryDirs(stateDir, id)
	if err != nil {
		return "", fmt.Errorf("dream: looking %q up in the staged dreams: %w", id, err)
	}
	found, err := audit.Find(ctx, stateDir, id)
	if err != nil {
		return "", fmt.Errorf("dream: looking %q up in the audit histories: %w", id, err)
	}
	for _, f := range found {
		dirs = appendNew(dirs, filepath.Clean(f.MemoryDir))
	}
	return oneMemoryDir(id, dirs, nil)
}

// memoryDirsInEvents lists, deduplicated, the memory dirs of the events
// whose task id starts with id.
func memoryDirsInEvents(stateDir, id string) ([]string, error) {
	events, err := telemetry.Open(stateDir).Read(time.Time{})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("dream: reading the event log: %w", err)
	}
	var dirs []string
	for _, ev := range events {
		if ev.TaskID != "" && ev.MemoryDir != "" && strings.HasPrefix(ev.TaskID, id) {
			dirs = appendNew(dirs, filepath.Clean(ev.MemoryDir))
		}
	}
	return dirs, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func oneMemoryDir(id string, dirs []string, err error) (string, error) {
	switch {
	case err != nil:
		return "", err
	case len(dirs) == 0:
		return "", fmt.Errorf("%w: %q", ErrUnknownDream, id)
	case len(dirs) > 1:
		sort.Strings(dirs)
		return "", &AmbiguousDreamError{ID: id, MemoryDirs: dirs}
	}
	return dirs[0], nil
}

// HasDreamed reports whether dream has ever changed memoryDir (a dream, an
// undo or an applied review recorded in its audit history under stateDir),
// so that a front end can explain, once, what a first dream is about to
// do. It writes nothing.
func HasDreamed(ctx context.Context, stateDir, memoryDir string) (bool, error) {
	return audit.Dreamed(ctx, stateDir, memoryDir)
}
