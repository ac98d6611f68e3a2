package dream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
	var refused []string
	for _, c := range changes {
		staged := filepath.Join(txn.Dir(), filepath.FromSlash(c.Path))
		before, err := start.file(c.Path)
		if err != nil {
			return refused, err
		}
		after, err := readOptional(staged)
		if err != nil {
			return refused, err
		}
		rerr := d.cfg.CheckEdit(c.Path, before, after)
		if rerr == nil {
			continue
		}
		refused = append(refused, rerr.Error())
		// Staging shows the file as the dream found it (the loss guard
		// reads it next); the commit leaves the memory's file alone.
		if before == nil {
			err = os.Remove(staged)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else {
			err = writeStaged(staged, before)
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

// writeStaged replaces a staged file rather than writing into it: with
// linked staging an unwritten staged file is the original's inode, and a
// write through it would change the user's memory.
func writeStaged(path string, data []byte) error {
	// The staging is made durable by the journal's commit, so no fsync here.
	return fsutil.WriteFileAtomicNoSync(path, data, 0o644)
}

// readOptional reads path; nil, nil when it does not exist.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
