package dream

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lossguard"
)

// memoryStart is the memory as it was when the dream started, the "before"
// both guards judge against. It is not a copy: a user may edit memory while
// a dream runs (the commit merges those edits), and an edit of theirs must
// never look like the dream's, but copying a memory of 30,000 files to know
// that would make every dream cost the memory's size. A file's start
// version is read only when a guard asks for it, which is only for files
// the dream changed: from the memory's own file while the journal proves it
// untouched since staging began (same inode, size and mtime), else from the
// audit history's HEAD, which RecordHandEdits set to the memory just before
// the dream began.
type memoryStart struct {
	ctx  context.Context
	txn  *journal.Txn
	hist *audit.History
}

// memoryBefore is the memory as the dream starts, read lazily (see
// memoryStart); call it right after staging began.
func (d *Dreamer) memoryBefore(ctx context.Context, txn *journal.Txn, hist *audit.History) (*memoryStart, error) {
	return &memoryStart{ctx: ctx, txn: txn, hist: hist}, nil
}

// file is rel (slash path) as the dream started; nil when it did not exist.
// A file the history does not hold (out of its scope, or created between
// the record and staging) and edited since is read live, as a last resort.
func (s *memoryStart) file(rel string) ([]byte, error) {
	b, existed, intact, err := s.txn.ReadOriginal(rel)
	if !existed {
		return nil, nil
	}
	if err == nil && intact {
		return b, nil
	}
	path, _, _ := s.txn.Original(rel)
	if s.hist != nil {
		b, err := s.hist.HeadFile(s.ctx, rel)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return readOptional(path)
}

// guardLoss runs the loss guard on a finished runner's staging dir against
// the memory as it was when the dream started (before). It fails a strict
// runner that changed a unit it did not record; its verdict says whether a
// dream would lose too much (Hold), whether it changed anything, and, for a
// model dream, accounts for every unit it removed or rewrote (Ledger).
//
// Only the changed Markdown files are read on both sides, each by the
// guard's worker when it gets to it, so that neither side of the change is
// held in memory at once; the unchanged ones are streamed from staging,
// where they are the originals, only when a unit left its file, to look
// for it there (lossguard.CheckFiles).
func (d *Dreamer) guardLoss(out Outcome, before *memoryStart, stagedDir string) (lossguard.Verdict, error) {
	changes, err := before.txn.Changes()
	if err != nil {
		return lossguard.Verdict{}, err
	}
	kinds := map[string]string{} // path → journal change kind
	var paths []string
	for _, c := range changes {
		if !lossguard.Covers(c.Path) {
			continue
		}
		kinds[c.Path] = c.Kind
		paths = append(paths, c.Path)
	}
	sides := lossguard.Sides{
		Before: func(rel string) ([]byte, bool, error) {
			if kinds[rel] == journal.Added {
				return nil, false, nil
			}
			b, err := before.file(rel)
			return b, b != nil, err
		},
		After: func(rel string) ([]byte, bool, error) {
			if kinds[rel] == journal.Deleted {
				return nil, false, nil
			}
			b, err := readOptional(filepath.Join(stagedDir, filepath.FromSlash(rel)))
			return b, b != nil, err
		},
	}
	unchanged := lossguard.WalkTree(stagedDir, func(rel string) bool { _, ok := kinds[rel]; return ok })
	v, err := lossguard.CheckFiles(before.ctx, paths, sides, unchanged, lossguard.Options{Strict: out.Strict, Records: out.lossRecords(), MaxLoss: d.cfg.Settings.MaxLoss})
	if err != nil {
		return v, err
	}
	return v, v.Err()
}
