package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// A record's roll-up (`git repack -d`) ends with prune-packed, which
// calls rmdir on every fan-out directory of objects/ (00 to ff), and git
// writing a loose object creates that directory and only then its
// temporary file in it: a tree or commit written beside a roll-up could
// find its directory gone in between and fail with "unable to create
// temporary file". So what a record writes while its roll-up runs goes
// to a quarantine, an object dir of its own with the repository's as its
// alternate: readers see both, the roll-up sees neither the quarantine
// nor its directories. Once the roll-up has ended, the objects move into
// the repository before anything refers to them. It is git's own way for
// objects not yet accepted (receive-pack's tmp_objdir), and its name
// starts the way git's does, so `git prune` also removes a stale one.
const quarantinePrefix = "tmp_objdir-record-"

// staleQuarantine is how old a quarantine must be before a record takes
// it for one a killed record left behind: a record lasts seconds.
const staleQuarantine = time.Hour

// openQuarantine makes a quarantine and returns the History that writes
// its objects there.
func (h *History) openQuarantine() (*History, error) {
	objects := filepath.Join(h.gitDir, "objects")
	h.dropStaleQuarantines(objects, time.Now())
	dir, err := os.MkdirTemp(objects, quarantinePrefix)
	if err != nil {
		return nil, fmt.Errorf("audit: quarantine: %w", err)
	}
	// An alternates file's relative path is relative to the object dir
	// holding it, so ".." is the repository's, whatever its path holds
	// (the environment's list would need quoting of colons).
	err = os.Mkdir(filepath.Join(dir, "info"), 0o755)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "info", "alternates"), []byte("..\n"), 0o644)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("audit: quarantine: %w", err)
	}
	q := *h
	q.objectDir = dir
	return &q, nil
}

// settleQuarantine moves the loose objects q wrote into the repository's
// object dir and removes the quarantine. Only complete objects move: a
// fan-out dir's files named by an object id (git writes an object under a
// temporary name and renames it once whole). Objects are named by their
// content, so one the repository already has is simply dropped. A
// record's writers (write-tree, commit-tree) write no packs.
func (q *History) settleQuarantine() error {
	objects := filepath.Join(q.gitDir, "objects")
	des, err := os.ReadDir(q.objectDir)
	if err != nil {
		return fmt.Errorf("audit: settle quarantine: %w", err)
	}
	for _, de := range des {
		if !de.IsDir() || len(de.Name()) != 2 {
			continue
		}
		if err := moveObjects(filepath.Join(q.objectDir, de.Name()), filepath.Join(objects, de.Name())); err != nil {
			return fmt.Errorf("audit: settle quarantine: %w", err)
		}
	}
	return q.dropQuarantine()
}

// dropQuarantine removes the quarantine and what is still in it.
func (q *History) dropQuarantine() error {
	if err := os.RemoveAll(q.objectDir); err != nil {
		return fmt.Errorf("audit: remove quarantine: %w", err)
	}
	return nil
}

// moveObjects moves the loose objects of one fan-out dir of a quarantine
// (its name and a file's make an object id) into the repository's, which
// it creates with git's own mode (0777 less the umask) when it has one.
func moveObjects(from, to string) error {
	des, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	made := false
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !isObjectID(filepath.Base(from)+name) {
			continue
		}
		if !made {
			if err := os.Mkdir(to, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			made = true
		}
		if err := moveObject(filepath.Join(from, name), filepath.Join(to, name)); err != nil {
			return err
		}
	}
	return nil
}

// moveObject links from to to, as git finalizes an object file: a link
// never replaces what is there, and what is there has the same content.
func moveObject(from, to string) error {
	if err := os.Link(from, to); err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: a rename, which replaces
		// the same bytes at worst.
		if err := os.Rename(from, to); err != nil {
			return err
		}
	}
	return nil
}

// dropStaleQuarantines removes the quarantines of records killed before
// they settled them. What they hold no ref points to (a record moves HEAD
// only after settling), and the index's cached trees that name one of
// them are written again by the next write-tree, which checks that a
// cached tree exists before it trusts it. The records of one history run
// one at a time (every caller holds the dream's lock), so any quarantine
// here is a killed record's; the hour is only a margin for a writer that
// broke that rule, and leaves a killed record's few trees on disk as long.
func (h *History) dropStaleQuarantines(objects string, now time.Time) {
	dirs, _ := fsutil.Glob(objects, quarantinePrefix+"*")
	for _, dir := range dirs {
		if info, err := os.Lstat(dir); err == nil && info.IsDir() && now.Sub(info.ModTime()) > staleQuarantine {
			_ = os.RemoveAll(dir)
		}
	}
}
