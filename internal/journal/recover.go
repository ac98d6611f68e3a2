package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Recover finishes or forgets the transactions of a memory dir left by a
// process that died. Call it while holding the consolidation lock, so no live
// dream owns any of them: a staging transaction is discarded (the memory dir
// was never touched), a committing one is rolled forward from its record and
// staging copy, a committed leftover is removed, a parked one is kept. It
// then removes temporary files an interrupted commit left in the memory dir.
// Problems with one transaction do not stop the others; they are joined in
// the returned error.
func Recover(stateDir, memoryDir string) (Recovery, error) {
	var res Recovery
	root, mem, err := journalRoot(stateDir, memoryDir)
	if err != nil {
		return res, fmt.Errorf("journal: recover: %w", err)
	}
	entries, err := list(root)
	if err != nil {
		return res, fmt.Errorf("journal: recover: %w", err)
	}
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(root, e.name)
		if e.err != nil {
			if errors.Is(e.err, fs.ErrNotExist) {
				// Died before the first record was written: nothing
				// reached the memory dir.
				if err := os.RemoveAll(dir); err != nil {
					errs = append(errs, fmt.Errorf("journal: recover %s: %w", e.name, err))
					continue
				}
				res.Discarded = append(res.Discarded, e.name)
				continue
			}
			errs = append(errs, fmt.Errorf("journal: recover %s: left in place: %w", e.name, e.err))
			continue
		}
		switch e.rec.State {
		case StateStaging:
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, fmt.Errorf("journal: recover %s: %w", e.name, err))
				continue
			}
			res.Discarded = append(res.Discarded, e.name)
		case StateCommitting:
			crashPoint("recover:forward:%s", e.name)
			t := &Txn{memDir: mem, txnDir: dir, rec: e.rec}
			skipped, err := apply(mem, t.Dir(), e.rec, nil)
			if err != nil {
				errs = append(errs, fmt.Errorf("journal: recover %s: roll forward: %w", e.name, err))
				continue
			}
			for _, p := range skipped {
				res.Skipped = append(res.Skipped, e.name+": "+p)
			}
			landed := []string{}
			for _, c := range e.rec.Changes {
				if !contains(skipped, c.Path) {
					landed = append(landed, c.Path)
				}
			}
			if err := t.finish(); err != nil {
				errs = append(errs, fmt.Errorf("journal: recover %s: %w", e.name, err))
				continue
			}
			res.RolledForward = append(res.RolledForward, e.name)
			res.landed(e.name, landed)
		case StateCommitted:
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, fmt.Errorf("journal: recover %s: %w", e.name, err))
				continue
			}
			// Its files all landed, but the process died before the
			// caller could record them.
			paths := make([]string, 0, len(e.rec.Changes))
			for _, c := range e.rec.Changes {
				paths = append(paths, c.Path)
			}
			res.landed(e.name, paths)
		case StateParked:
		}
	}
	if err := removeTemps(mem); err != nil {
		errs = append(errs, fmt.Errorf("journal: recover: %w", err))
	}
	return res, errors.Join(errs...)
}

// removeTemps deletes dream's temporary files anywhere in the memory dir.
// It reads directory entries only, unsorted (no stat, no sort per
// directory): it runs before every dream, over a memory of any size.
func removeTemps(mem string) error {
	var errs []error
	var walk func(dir string)
	walk = func(dir string) {
		f, err := os.Open(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return
		}
		defer f.Close()
		for {
			des, err := f.ReadDir(1024)
			for _, d := range des {
				name := d.Name()
				switch {
				case d.IsDir():
					if name != ".git" {
						walk(filepath.Join(dir, name))
					}
				case strings.HasPrefix(name, TempPrefix):
					if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
						errs = append(errs, fmt.Errorf("remove temp %s: %w", filepath.Join(dir, name), err))
					}
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					errs = append(errs, err)
				}
				return
			}
		}
	}
	walk(mem)
	return errors.Join(errs...)
}

// Root is the dir HasPending and Recover look in for memoryDir's
// transactions (memoryDir resolved through its symlinks).
func Root(stateDir, memoryDir string) (string, error) {
	root, _, err := journalRoot(stateDir, memoryDir)
	return root, err
}

// HasPending reports whether a transaction other than a parked review is
// left for the memory dir: the sign of a dream that died, which Recover
// must finish or forget. It only reads, so any process may ask it without
// holding the lock.
func HasPending(stateDir, memoryDir string) bool {
	root, _, err := journalRoot(stateDir, memoryDir)
	if err != nil {
		return false
	}
	entries, err := list(root)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.err != nil || e.rec.State != StateParked {
			return true
		}
	}
	return false
}
