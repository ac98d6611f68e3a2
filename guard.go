package dream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/internal/lossguard"
	"github.com/dreamkit/dream/internal/trust"
)

// guardEdits asks Config.CheckEdit about every staged change and leaves each
// refused file out of the dream, so that what the host agent cannot load (a
// Codex MEMORY.md block whose header lost a line, a log the agent replays)
// never lands while the rest of the dream does. It returns one message per
// refused file.
//
// Both the judgement and the put-back use the memory as it was when the
// dream started (start, read right after staging began), not the live
// memory dir: a file the user saved while the dream ran must neither be
// judged as the dream's "before" nor copied into staging, where the journal
// would land it as the dream's change and `dream undo` would then revert
// the user's edit. A refused path is also dropped from the transaction
// (Txn.Keep), so the commit never touches it. Only changed files' start
// versions are read (see memoryStart).
func (d *Dreamer) guardEdits(txn *journal.Txn, start *memoryStart) ([]string, error) {
	// The runner has returned: the guards and the commit share one walk
	// of staging.
	txn.Freeze()
	if d.cfg.CheckEdit == nil {
		return nil, nil
	}
	changes, err := txn.Changes()
	if err != nil {
		return nil, err
	}
	// Reading both versions of every change is most of the cost: the files
	// are read over GOMAXPROCS workers. CheckEdit is asked one file at a
	// time (a Config's function need not be safe for concurrent use), and
	// the refusals are acted on in the order of the changes.
	type judgement struct {
		before  []byte
		refused error
		err     error
	}
	results := make([]judgement, len(changes))
	var mu sync.Mutex
	inParallel(len(changes), func(i int) {
		c := changes[i]
		before, err := start.file(c.Path)
		if err != nil {
			results[i].err = err
			return
		}
		after, err := readOptional(filepath.Join(txn.Dir(), filepath.FromSlash(c.Path)))
		if err != nil {
			results[i].err = err
			return
		}
		mu.Lock()
		rerr := d.cfg.CheckEdit(c.Path, before, after)
		mu.Unlock()
		if rerr != nil {
			results[i] = judgement{before: before, refused: rerr}
		}
	})
	var refused []string
	for i, c := range changes {
		j := results[i]
		if j.err != nil {
			return refused, j.err
		}
		if j.refused == nil {
			continue
		}
		refused = append(refused, j.refused.Error())
		// Staging shows the file as the dream found it (the loss guard
		// reads it next); the commit leaves the memory's file alone.
		staged := filepath.Join(txn.Dir(), filepath.FromSlash(c.Path))
		if j.before == nil {
			err = os.Remove(staged)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else {
			err = writeStaged(staged, j.before)
		}
		if err == nil {
			err = txn.Keep(c.Path)
		}
		if err != nil {
			return refused, fmt.Errorf("putting back %s: %w", c.Path, err)
		}
	}
	return refused, nil
}

// inParallel runs fn(0..n-1) over GOMAXPROCS goroutines.
func inParallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(runtime.GOMAXPROCS(0), n); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// writeStaged replaces a staged file rather than writing into it: with
// linked staging an unwritten staged file is the original's inode, and a
// write through it would change the user's memory.
func writeStaged(path string, data []byte) error {
	// The staging is made durable by the journal's commit, so no fsync here.
	return fsutil.WriteFileAtomic(path, data, 0o644, false)
}

// readOptional reads path; nil, nil when it does not exist.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

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

// guardEvidence judges a model dream's ledger (annotating it in place)
// against what its model was shown (lossguard.JudgeEvidence): the files
// whose changed values nothing supports are held, with those that need
// them, and too many facts deleted without a trace hold the whole dream.
func (d *Dreamer) guardEvidence(out Outcome, ledger []lossguard.Entry, changes []journal.Change, stagedDir string) lossguard.EvidenceVerdict {
	cs := make([]lossguard.Changed, len(changes))
	for i, c := range changes {
		cs[i] = lossguard.Changed{Path: c.Path, Added: c.Kind == journal.Added, Deleted: c.Kind == journal.Deleted}
	}
	return lossguard.JudgeEvidence(lossguard.EvidenceInput{
		Corpus:  evidence.NewCorpus(out.Shown, out.Contradictions, out.Citations),
		Ledger:  ledger,
		Changes: cs,
		ReadStaged: func(rel string) ([]byte, error) {
			return readOptional(filepath.Join(stagedDir, filepath.FromSlash(rel)))
		},
		MaxUntraced: d.cfg.Settings.MaxUntracedDeletions,
	})
}

// checkWritableDirs refuses a configuration that would let dream write where
// credentials live. The home directory and the variables that move those
// stores come from this process's environment, as the agents that own them
// read it.
func checkWritableDirs(cfg Config) error {
	home, _ := os.UserHomeDir()
	for _, d := range []struct{ role, dir string }{
		{"memory dir", cfg.MemoryDir},
		{"state dir", cfg.StateDir},
	} {
		if err := trust.CheckWritableDir(d.role, d.dir, os.LookupEnv, home); err != nil {
			return fmt.Errorf("dream: %w", err)
		}
	}
	return nil
}

// fence checks, at a stage boundary of a running dream, that the lock is
// still ours. It is the only thing that keeps a dream from landing changes
// over another consolidation that started meanwhile: the other agents do not
// know dream's flock, only the PID body and mtime, and those are what it
// re-reads. stage names the boundary for the message.
func (d *Dreamer) fence(stage string) error {
	err := d.lock.Verify()
	if err == nil {
		return nil
	}
	if errors.Is(err, lock.ErrLost) {
		return fmt.Errorf("dream: %w %s; rolled back, nothing landed", err, stage)
	}
	return fmt.Errorf("dream: checking the consolidation lock %s: %w", stage, err)
}

// lockWatchInterval is how often a running dream re-checks its lock. A
// check costs about as much as a few stats; a second is far below any
// model turn, so a dream that lost its lock stops within one turn.
const lockWatchInterval = time.Second

// watchLock re-checks the lock while the agent runs and, as soon as another
// agent has taken it over, cancels the run with the takeover as its cause:
// the dream stops spending tokens on changes it could never land. It ends
// with ctx.
func (d *Dreamer) watchLock(ctx context.Context, cancel context.CancelCauseFunc) {
	go func() {
		t := time.NewTicker(lockWatchInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := d.lock.Verify(); errors.Is(err, lock.ErrLost) {
					cancel(fmt.Errorf("dream: %w during the run; rolled back, nothing landed", err))
					return
				}
			}
		}
	}()
}

// inspectForStatus is Inspect for `dream status`, which must explain a lock
// file it cannot use (a directory, a FIFO, an unreadable file) instead of
// failing: the problem comes back in words, with a holder that is not live.
func (d *Dreamer) inspectForStatus() (LockHolder, string) {
	h, err := d.lock.Inspect()
	if err != nil {
		return LockHolder{Exists: true, Reason: "unusable lock file"}, err.Error()
	}
	return h, ""
}
