package dream

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
)

// HistoryEntry is one audited change of the memory dir: a dream, an undo,
// an applied review, or hand edits recorded before a dream.
type HistoryEntry struct {
	// ID is the dream's id, or "hand-<short sha>" for hand edits.
	ID string `json:"id"`
	// Commit is the change's commit in the audit history.
	Commit string `json:"commit"`
	// Kind is "dream", "undo", "apply" or "hand".
	Kind      string    `json:"kind"`
	Status    string    `json:"status"`
	StartedAt time.Time `json:"started_at"`
	Files     []Change  `json:"files"`
	// Diff is the unified diff of the memory files.
	Diff string `json:"diff"`
	// Units are a model dream's account of every unit it removed or
	// rewrote, as its report gave them (see Report.Units).
	Units []json.RawMessage `json:"units,omitempty"`
}

// historyEntryOf converts an audit entry at the API's boundary.
func historyEntryOf(e audit.Entry) HistoryEntry {
	out := HistoryEntry{ID: e.ID, Commit: e.Commit, Kind: e.Kind, Status: e.Status, StartedAt: e.StartedAt, Diff: e.Diff}
	if e.Files != nil {
		out.Files = make([]Change, 0, len(e.Files))
	}
	for _, f := range e.Files {
		out.Files = append(out.Files, Change{Path: f.Path, Kind: f.Status, Added: f.Added, Removed: f.Removed})
	}
	out.Units = validUnits(e.Units)
	return out
}

// Log returns the audit history, newest first; limit <= 0 means all.
func (d *Dreamer) Log(ctx context.Context, limit int) ([]HistoryEntry, error) {
	h, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if err != nil {
		return nil, fmt.Errorf("dream: opening the audit history: %w", err)
	}
	entries, err := h.Log(ctx, limit)
	if entries == nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, historyEntryOf(e))
	}
	return out, err
}

// Show returns one audited change by dream id (or a unique prefix).
func (d *Dreamer) Show(ctx context.Context, id string) (HistoryEntry, error) {
	h, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if err != nil {
		return HistoryEntry{}, fmt.Errorf("dream: opening the audit history: %w", err)
	}
	e, err := h.Show(ctx, id)
	return historyEntryOf(e), err
}

// withLock runs fn as a foreground step under the consolidation lock (see
// locked). complete says whether fn's change counts as a consolidation (the
// lock's mtime moves forward) or not (the mtime is rewound to where it was).
func (d *Dreamer) withLock(ctx context.Context, fn func() (complete bool, err error)) error {
	return d.locked(ctx, stepOptions{claim: true}, func(*held, journal.Recovery) (bool, error) {
		return fn()
	})
}

// ownerChecker is a backend that can prove it still holds the lock without
// recording a completion (etcd: a transaction comparing the lock key's
// revision).
type ownerChecker interface {
	CheckOwner(ctx context.Context) error
}

// fenceLanding is called immediately before a change lands files in the
// memory dir while holding the lock: a holder that lost the lock (an etcd
// lease that expired while the process was paused or cut off) must not land
// anything, and learning it only at Complete, after the files landed, is too
// late. A consolidation fences (recording its completion in the same etcd
// transaction); a change that is not one (undo, pull) only proves ownership,
// so the time gate stays where it was.
func (d *Dreamer) fenceLanding(ctx context.Context, consolidation bool) error {
	var err error
	switch c, ok := d.lock.(ownerChecker); {
	case consolidation:
		err = d.lock.Fence(ctx)
	case ok:
		err = c.CheckOwner(ctx)
	default:
		err = d.lock.Verify()
	}
	if err != nil {
		return fmt.Errorf("dream: the consolidation lock was lost, nothing landed: %w", err)
	}
	return nil
}

// Undo brings the memory dir back to its state before dream id, as a new
// audited change. Hand edits are recorded first, so nothing a user wrote is
// lost; if later changes touched the same lines it refuses with an
// explanation unless force. It does not move the time gate.
func (d *Dreamer) Undo(ctx context.Context, id string, force bool) (HistoryEntry, error) {
	var e HistoryEntry
	err := d.withLock(ctx, func() (bool, error) {
		h, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
		if err != nil {
			return false, err
		}
		if err := d.fenceLanding(ctx, false); err != nil {
			return false, err
		}
		undone, err := h.Undo(ctx, id, force)
		e = historyEntryOf(undone)
		return false, err
	})
	return e, err
}

// Staged returns the parked review runs of this memory dir.
func (d *Dreamer) Staged() ([]StagedRun, error) {
	infos, err := journal.ListParked(d.cfg.StateDir, d.cfg.MemoryDir)
	return stagedRunsOf(infos), err
}

// stagedDiff is the DreamDiff of the staged review run t.
func stagedDiff(id string, t *journal.Txn) (DreamDiff, error) {
	cs, err := t.Changes()
	if err != nil {
		return DreamDiff{}, err
	}
	diff, err := t.Diff()
	changes := changesOf(cs)
	if changes == nil {
		changes = []Change{}
	}
	return DreamDiff{ID: id, Source: DiffStaged, Status: StatusStaged, Changes: changes, Diff: diff, Units: validUnits(t.Units()), ParkReason: t.ParkReason()}, err
}

// Apply lands the staged changes of a review run, as a completed
// consolidation recorded in the audit history.
func (d *Dreamer) Apply(ctx context.Context, id string) ([]Change, string, error) {
	var changes []Change
	var commit string
	// An applied review lands a dream as a run does, and is followed up
	// the same way, once the lock is released (and before the running
	// flag is, so that no other dream of this Dreamer overlaps it).
	after := func(err error) {
		if d.cfg.AfterLand != nil && err == nil && len(changes) > 0 {
			if ferr := d.cfg.AfterLand(ctx, d.cfg.MemoryDir); ferr != nil {
				d.cfg.Logf("dream: %v", ferr)
			}
		}
	}
	err := d.locked(ctx, stepOptions{claim: true, afterRelease: after}, func(*held, journal.Recovery) (bool, error) {
		t, err := journal.Load(d.cfg.StateDir, d.cfg.MemoryDir, id)
		if err != nil {
			return false, d.notStaged(ctx, id, err)
		}
		h, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
		if err != nil {
			return false, err
		}
		if _, err := h.RecordHandEdits(ctx); err != nil {
			return false, err
		}
		if err := d.fenceLanding(ctx, true); err != nil {
			return false, err
		}
		landed, err := t.Commit()
		changes = changesOf(landed)
		if err != nil {
			if len(changes) > 0 {
				// A file edited during the commit was kept as edited and
				// the rest landed: record what landed under this review.
				commit, _ = h.RecordDream(ctx, audit.Meta{DreamID: t.ID(), Status: "partial", Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: d.cfg.Now(), Kind: "apply", Units: t.Units()})
			}
			// What landed is a consolidation: the time gate must not
			// reopen for it (see locked).
			return len(changes) > 0, err
		}
		commit, err = h.RecordDream(ctx, audit.Meta{DreamID: t.ID(), Status: StatusCompleted, Provider: d.cfg.Provider, Model: d.cfg.Model, StartedAt: d.cfg.Now(), Kind: "apply", Units: t.Units()})
		return true, err
	})
	return changes, commit, err
}

// Why a dream was staged for review (Report.ParkReason, DreamDiff.ParkReason).
const (
	// ParkReviewRequested: the caller or the user's settings asked for review.
	ParkReviewRequested = "review requested"
	// ParkLossGuard prefixes the loss guard's summary of what the dream
	// would lose: a hold only a human may lift.
	ParkLossGuard = "loss guard: "
)

// Discard drops the staged changes of a review run.
func (d *Dreamer) Discard(id string) error {
	t, err := journal.Load(d.cfg.StateDir, d.cfg.MemoryDir, id)
	if err != nil {
		return err
	}
	return t.Discard()
}

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
	// ParkReason says why a staged dream waits for review
	// (ParkReviewRequested, or ParkLossGuard and what it would lose); ""
	// for one staged before reasons were recorded, and for a landed one.
	ParkReason string `json:"park_reason,omitempty"`
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
	if t, err := journal.Load(d.cfg.StateDir, d.cfg.MemoryDir, id); err == nil {
		// Staged: a diff that cannot be made is an error, not a reason
		// to look for a landed dream of that id.
		dd, err := stagedDiff(id, t)
		if err != nil {
			return DreamDiff{}, fmt.Errorf("dream %s: the staged changes: %w", id, err)
		}
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
