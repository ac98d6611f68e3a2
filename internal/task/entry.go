// Package task is the registry of dreams visible across processes: one JSON
// file per dream under <stateDir>/tasks/, so that `dream tasks` in another
// terminal can see what a background dream is doing and `dream kill` can stop
// it. A dream owns its entry through a Handle and is the only writer of it
// while it runs; other processes only read entries, drop a kill marker, or
// mark an entry failed once its process is provably dead.
package task

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// Status is where a dream is in its life.
type Status string

const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusKilled    Status = "killed"
)

// finished reports whether s is a terminal status.
func (s Status) finished() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusKilled
}

// Phase is the user-facing progress of a running dream: starting until its
// first successful write, then updating, never back. The agent's internal
// phases are deliberately not exposed: they mean nothing to the user.
type Phase string

const (
	PhaseStarting Phase = "starting"
	PhaseUpdating Phase = "updating"
)

// MaxTurns is how many turn summaries an entry keeps (the most recent).
const MaxTurns = 30

// MaxFilesListed is how many touched files an entry lists by name; the
// count of all of them is FilesTouchedTotal.
const MaxFilesListed = 100

// DefaultKeep is how many finished entries Prune keeps when a caller has no
// better number.
const DefaultKeep = 50

// Entry is one dream as stored on disk.
type Entry struct {
	ID        string `json:"id"`
	Status    Status `json:"status"`
	Phase     Phase  `json:"phase"`
	MemoryDir string `json:"memory_dir"`
	PID       int    `json:"pid"`
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	// ProviderWhy says why that provider: a setting, a key given to
	// dream, or offline because a key was only inherited.
	ProviderWhy string `json:"provider_why,omitempty"`
	// Estimate is what a model dream was expected to cost.
	Estimate         *spend.Amount `json:"estimate,omitempty"`
	SessionsReviewed int           `json:"sessions_reviewed"`
	FilesTouched     []string      `json:"files_touched"`
	// FilesTouchedTotal counts every file touched; FilesTouched names at
	// most MaxFilesListed of them.
	FilesTouchedTotal int        `json:"files_touched_total"`
	Turns             []string   `json:"turns"`
	ToolCalls         int        `json:"tool_calls"`
	Usage             llm.Usage  `json:"usage"`
	StartedAt         time.Time  `json:"started_at"`
	EndedAt           *time.Time `json:"ended_at,omitempty"`
	Error             string     `json:"error,omitempty"`
	Review            bool       `json:"review,omitempty"`
	// Job names the job the dream runs; empty for the memory dream, and
	// Doing says what it does ("doing a code checkup").
	Job   string `json:"job,omitempty"`
	Doing string `json:"doing,omitempty"`
}

// clone deep-copies e so that a caller's func cannot alias the Handle's state.
// Nil slices become empty, so JSON shows [] and comparisons are stable.
func (e Entry) clone() Entry {
	c := e
	c.FilesTouched = append([]string{}, e.FilesTouched...)
	c.Turns = append([]string{}, e.Turns...)
	if e.EndedAt != nil {
		t := *e.EndedAt
		c.EndedAt = &t
	}
	return c
}

// NewID returns a short, unique id that sorts by start time, such as
// "20261130-111932-3f9a": the UTC time to the second and 16 random bits.
func NewID(now time.Time) string {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported systems; fall back to the
		// nanoseconds rather than returning an error from an id generator.
		b[0], b[1] = byte(now.Nanosecond()>>8), byte(now.Nanosecond())
	}
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// validID accepts ids that are safe as file names (fsutil.ValidName), at
// most 64 bytes.
func validID(id string) error {
	if !fsutil.ValidName(id, 64) {
		return fmt.Errorf("invalid task id %q", id)
	}
	return nil
}
