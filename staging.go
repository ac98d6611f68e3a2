package dream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/offline"
)

// FileReplacer is implemented by a Runner that never writes a staged file
// in place: every write is a new file renamed over the old one (as the
// sandbox's write and edit and the offline engine do). Such a runner gets a
// staging view in which unchanged files are hard links to the originals, so
// a dream over a memory of 30,000 files, or one with a 200 MB pasted log,
// copies only what it writes. Any other runner gets a full copy: an in-place
// write through a link would reach the user's memory before the commit.
type FileReplacer interface {
	ReplacesFiles() bool
}

// beginStaging starts the dream's transaction with the cheapest staging
// the runner allows: linked (FileReplacer) or a copy.
func (d *Dreamer) beginStaging(id string) (*journal.Txn, error) {
	r, ok := d.cfg.Runner.(FileReplacer)
	return journal.BeginWith(d.cfg.StateDir, d.cfg.MemoryDir, id, journal.Options{LinkUnchanged: ok && r.ReplacesFiles()})
}

// commitOptions lets the journal merge a file the user edited during the
// dream: the content before the dream is the audit history's HEAD, which
// recorded the hand edits just before the dream began (the journal asks
// before BeforeApply records the user's versions of the merged files, so
// HEAD is still that state). The user's edits are recorded as the user's,
// then the merge as the dream's, so undoing the dream keeps them.
func commitOptions(ctx context.Context, hist *audit.History) journal.CommitOptions {
	return journal.CommitOptions{BeforeApply: func(merged []string) error {
		_, err := hist.RecordHandEditsOf(ctx, merged)
		return err
	}, Base: startOf(ctx, hist)}
}

// startOf reads a file as the memory was just before the dream: the audit
// history's HEAD, which RecordHandEdits set right before staging began; ok
// is false when the file did not exist then.
func startOf(ctx context.Context, hist *audit.History) func(string) ([]byte, bool, error) {
	return func(path string) ([]byte, bool, error) {
		if hist == nil {
			return nil, false, nil
		}
		data, err := hist.HeadFile(ctx, path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, audit.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return data, true, nil
	}
}

// recoverJournal is journal.Recover plus the audit record of every commit it
// finished, under the dream it belongs to: without it the next dream would
// record a rolled-forward dream's files as hand edits, and `dream undo` of
// that dream would find nothing. Callers hold the lock.
func (d *Dreamer) recoverJournal(ctx context.Context) (journal.Recovery, error) {
	rec, err := journal.Recover(d.cfg.StateDir, d.cfg.MemoryDir)
	if len(rec.Landed) == 0 {
		return rec, err
	}
	hist, herr := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if herr != nil {
		return rec, errors.Join(err, fmt.Errorf("recording recovered dreams: %w", herr))
	}
	ids := make([]string, 0, len(rec.Landed))
	for id := range rec.Landed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		meta := audit.Meta{DreamID: id, Status: "recovered", Kind: audit.KindDream, StartedAt: d.cfg.Now(), Paths: rec.Landed[id]}
		if _, rerr := hist.RecordDream(ctx, meta); rerr != nil {
			err = errors.Join(err, fmt.Errorf("recording recovered dream %s: %w", id, rerr))
		}
	}
	return rec, err
}

// missingPinned is offline.MissingPinned, skipped when nothing is pinned.
func missingPinned(pinned []string, dir string) ([]string, error) {
	if len(pinned) == 0 {
		return nil, nil
	}
	return offline.MissingPinned(pinned, dir)
}
