package dream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
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
