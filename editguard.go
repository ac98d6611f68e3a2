package dream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/journal"
)

// guardEdits asks Config.CheckEdit about every staged change and puts each
// refused file back, in the staging copy, as it is in the memory dir, so
// that what the host agent cannot load (a Codex MEMORY.md block whose header
// lost a line, a log the agent replays) never lands while the rest of the
// dream does. It returns one message per refused file.
func (d *Dreamer) guardEdits(txn *journal.Txn) ([]string, error) {
	if d.cfg.CheckEdit == nil {
		return nil, nil
	}
	changes, err := txn.Changes()
	if err != nil {
		return nil, err
	}
	var refused []string
	for _, c := range changes {
		orig := filepath.Join(d.cfg.MemoryDir, filepath.FromSlash(c.Path))
		staged := filepath.Join(txn.Dir(), filepath.FromSlash(c.Path))
		before, err := readOptional(orig)
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
		if before == nil {
			err = os.Remove(staged)
		} else {
			err = os.WriteFile(staged, before, 0o644)
		}
		if err != nil {
			return refused, fmt.Errorf("putting back %s: %w", c.Path, err)
		}
	}
	return refused, nil
}

// readOptional reads path; nil, nil when it does not exist.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
