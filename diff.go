package dream

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/journal"
)

// Change is one file a dream added, modified or deleted, relative to the
// memory dir, with its line counts.
type Change struct {
	// Path is slash-separated, relative to the memory dir.
	Path string `json:"path"`
	// Kind is "added", "modified" or "deleted".
	Kind    string `json:"kind"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// changesOf converts the journal's changes at the API's boundary; never nil,
// so JSON shows [].
func changesOf(cs []journal.Change) []Change {
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		out = append(out, Change{Path: c.Path, Kind: c.Kind, Added: c.Added, Removed: c.Removed})
	}
	return out
}

// StagedRun is a review run waiting for Apply or Discard.
type StagedRun struct {
	ID string `json:"id"`
	// State is the transaction's state in the journal ("parked").
	State string `json:"state"`
	// PID is the process that staged it.
	PID       int       `json:"pid"`
	CreatedAt time.Time `json:"created_at"`
}

// stagedRunsOf converts the journal's listing at the API's boundary.
func stagedRunsOf(infos []journal.Info) []StagedRun {
	out := make([]StagedRun, 0, len(infos))
	for _, i := range infos {
		out = append(out, StagedRun{ID: i.ID, State: i.State, PID: i.PID, CreatedAt: i.CreatedAt})
	}
	return out
}

// DreamDiff is what a dream changed, whether it still waits for review or
// already landed.
type DreamDiff struct {
	ID string `json:"id"`
	// Source is "staged" for a review run not yet applied, "audit" for a
	// change recorded in the audit history.
	Source  string   `json:"source"`
	Status  string   `json:"status,omitempty"`
	Changes []Change `json:"changes"`
	// Diff is the unified diff of the memory files.
	Diff string `json:"diff"`
	// Units are a model dream's account of the units it removed or
	// rewrote (see Report.Units): for a staged dream, those it staged.
	Units []json.RawMessage `json:"units,omitempty"`
}

// Diff sources.
const (
	DiffStaged = "staged"
	DiffAudit  = "audit"
)

// Diff returns dream id's changes: the staged ones of a review run if it is
// parked, else the audited ones of a landed dream. A caller that does not
// know which kind of id it holds (an MCP client, a script) needs no second
// guess.
func (d *Dreamer) Diff(ctx context.Context, id string) (DreamDiff, error) {
	if dd, err := d.stagedDiff(id); err == nil {
		return dd, nil
	}
	e, err := d.Show(ctx, id)
	if err != nil {
		return DreamDiff{}, fmt.Errorf("dream %s: neither staged nor in the audit history: %w", id, err)
	}
	if e.Files == nil {
		e.Files = []Change{}
	}
	return DreamDiff{ID: e.ID, Source: DiffAudit, Status: e.Status, Changes: e.Files, Diff: e.Diff, Units: e.Units}, nil
}
