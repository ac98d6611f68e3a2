// Package telemetry records what dreams cost and achieve, as a JSONL event
// log at <stateDir>/events.jsonl: one event when a dream fires (how long
// since the last and how many sessions piled up, to tune the gate), one when
// it completes (tokens, prompt-cache hit rate, sessions, files), one when it
// fails (reason and phase). Nothing leaves the machine; `dream log` and
// friends summarise the file.
package telemetry

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// FileName is the event log's name inside the state dir.
const FileName = "events.jsonl"

// Event names.
const (
	EventFired     = "dream_fired"
	EventCompleted = "dream_completed"
	EventFailed    = "dream_failed"
	// EventRefused: a model dream that did not start because its estimate
	// did not fit under a spending ceiling, or its model has no price.
	EventRefused = "dream_refused"
)

// MaxFilesListed is how many touched files an event names.
const MaxFilesListed = 100

// maxReason bounds a failure reason: an error that lists thousands of files
// must not make the line unreadable.
const maxReason = 4 << 10

// Event is one line of the log.
type Event struct {
	Time             time.Time  `json:"time"`
	Name             string     `json:"event"`
	TaskID           string     `json:"task_id,omitempty"`
	MemoryDir        string     `json:"memory_dir,omitempty"`
	HoursSinceLast   float64    `json:"hours_since_last,omitempty"`
	Sessions         int        `json:"sessions,omitempty"`
	Usage            *llm.Usage `json:"usage,omitempty"`
	CacheHitRate     float64    `json:"cache_hit_rate,omitempty"`
	SessionsReviewed int        `json:"sessions_reviewed,omitempty"`
	FilesTouched     []string   `json:"files_touched,omitempty"`
	// FilesTouchedTotal counts every file touched; FilesTouched lists at
	// most MaxFilesListed of them (the full list is the audit commit's).
	FilesTouchedTotal int    `json:"files_touched_total,omitempty"`
	DurationMS        int64  `json:"duration_ms,omitempty"`
	Reason            string `json:"reason,omitempty"`
	Phase             string `json:"phase,omitempty"`
	// Job names the job of the dream (empty: the memory dream); Found
	// counts what a completed job found, by kind (a health check's
	// outdated dependencies, TODOs ...).
	Job   string         `json:"job,omitempty"`
	Found map[string]int `json:"found,omitempty"`

	// Provider, Model and ProviderWhy say who dreams and why that one
	// (an explicit setting, a key given to dream, or offline because a
	// key was only inherited).
	Provider    string `json:"provider,omitempty"`
	Model       string `json:"model,omitempty"`
	ProviderWhy string `json:"provider_why,omitempty"`
	// Estimate is what a model dream was expected to cost, Cost what it
	// did.
	Estimate *spend.Amount `json:"estimate,omitempty"`
	Cost     *spend.Amount `json:"cost,omitempty"`
}

// Who is the provider of a dream and its estimate, for the fired event.
type Who struct {
	Provider, Model, Why string
	Estimate             *spend.Amount
}

// Log is the event log of one state dir. It holds no open file: each event
// is one open, one write, one close, so any number of processes can append.
type Log struct {
	path string
	now  func() time.Time
	// Job is stamped on every event this Log writes, and Found on its
	// completed events (see Event).
	Job   string
	Found map[string]int
}

// Open returns the log under stateDir. Nothing is touched until the first
// event is written.
func Open(stateDir string) *Log {
	return &Log{path: filepath.Join(stateDir, FileName), now: time.Now}
}

// Path is the log file's path.
func (l *Log) Path() string { return l.path }

// Fired records that a dream started.
func (l *Log) Fired(taskID, memoryDir string, hoursSinceLast float64, sessions int, who Who) error {
	return l.Append(Event{Name: EventFired, TaskID: taskID, MemoryDir: memoryDir, HoursSinceLast: hoursSinceLast, Sessions: sessions,
		Provider: who.Provider, Model: who.Model, ProviderWhy: who.Why, Estimate: who.Estimate})
}

// Refused records a model dream that did not start, and why.
func (l *Log) Refused(taskID, memoryDir, reason string, who Who) error {
	return l.Append(Event{Name: EventRefused, TaskID: taskID, MemoryDir: memoryDir, Reason: reason,
		Provider: who.Provider, Model: who.Model, ProviderWhy: who.Why, Estimate: who.Estimate})
}

// Completed records a successful dream with its cost (nil for a dream
// that spent no money: the offline engine, a host's own runner).
func (l *Log) Completed(taskID, memoryDir string, u llm.Usage, sessionsReviewed int, files []string, d time.Duration, cost *spend.Amount) error {
	return l.Append(Event{
		Name: EventCompleted, TaskID: taskID, MemoryDir: memoryDir,
		Usage: &u, CacheHitRate: u.CacheHitRate(), SessionsReviewed: sessionsReviewed,
		FilesTouched: files, FilesTouchedTotal: len(files), DurationMS: d.Milliseconds(), Cost: cost,
	})
}

// Failed records a failed, timed-out or killed dream, the phase it
// reached (starting: nothing was written yet; updating: files were) and
// the tokens it used before it ended (a model dream stopped at a ceiling
// spent them all the same).
func (l *Log) Failed(taskID, memoryDir, reason, phase string, u llm.Usage) error {
	e := Event{Name: EventFailed, TaskID: taskID, MemoryDir: memoryDir, Reason: reason, Phase: phase}
	if u.Total() > 0 {
		e.Usage, e.CacheHitRate = &u, u.CacheHitRate()
	}
	return l.Append(e)
}

// Append writes e as one line, stamping the time if it is zero. The line
// goes out in a single write on an O_APPEND descriptor, which the kernel
// appends atomically with respect to other appenders on a local file system,
// so concurrent processes never interleave within a line.
func (l *Log) Append(e Event) error {
	if e.Name == "" {
		return fmt.Errorf("telemetry: event without a name")
	}
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	if e.Job == "" {
		e.Job = l.Job
	}
	if e.Found == nil && e.Name == EventCompleted {
		e.Found = l.Found
	}
	e.Time = e.Time.Round(0).UTC()
	line, err := encodeBounded(e)
	if err != nil {
		return fmt.Errorf("telemetry: encoding %s: %w", e.Name, err)
	}
	line = append(line, '\n')
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("telemetry: writing %s: %w", e.Name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("telemetry: writing %s: %w", e.Name, err)
	}
	return nil
}

// encodeBounded encodes e in at most maxLine bytes, so that every event
// written can be read back: the touched-file list is capped (with its total
// kept), the reason is cut to maxReason, and if the line is still too long
// (very long paths) the list goes before anything else does.
func encodeBounded(e Event) ([]byte, error) {
	if e.FilesTouchedTotal < len(e.FilesTouched) {
		e.FilesTouchedTotal = len(e.FilesTouched)
	}
	if len(e.FilesTouched) > MaxFilesListed {
		e.FilesTouched = e.FilesTouched[:MaxFilesListed]
	}
	if len(e.Reason) > maxReason {
		e.Reason = strings.ToValidUTF8(e.Reason[:maxReason], "") + "…"
	}
	for {
		line, err := json.Marshal(e)
		if err != nil || len(line) < maxLine {
			return line, err
		}
		if len(e.FilesTouched) == 0 {
			e.MemoryDir = ""
			if line, err = json.Marshal(e); err != nil || len(line) < maxLine {
				return line, err
			}
			return nil, fmt.Errorf("event of %d bytes", len(line))
		}
		e.FilesTouched = e.FilesTouched[:len(e.FilesTouched)/2]
	}
}
