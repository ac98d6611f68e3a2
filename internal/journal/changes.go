package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/journal/linediff"
)

// Changes compares the staging copy with the memory dir as it was at Begin
// (by the recorded fingerprints) and returns the changed files, sorted by
// path. Line counts are taken against the original files; if someone edited
// one during the dream the counts describe that edit too, and Commit will
// refuse anyway.
func (t *Txn) Changes() ([]Change, error) {
	chs, err := t.changes()
	if err != nil {
		return nil, err
	}
	return plain(chs), nil
}

// Diff returns a git-style unified diff (a/ and b/ headers) of the staged
// changes, computed in Go by package linediff, so no git binary is needed
// and the output applies with `git apply`.
func (t *Txn) Diff() (string, error) {
	chs, err := t.changes()
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, c := range chs {
		old, new, err := t.sides(c.Change)
		if err != nil {
			return "", fmt.Errorf("journal: diff %s: %w", c.Path, err)
		}
		sb.WriteString(linediff.Unified(old, new))
	}
	return sb.String(), nil
}

func plain(chs []recChange) []Change {
	out := make([]Change, len(chs))
	for i, c := range chs {
		out[i] = c.Change
	}
	return out
}

// changes is Changes with what Commit needs to record.
func (t *Txn) changes() ([]recChange, error) {
	if t.closed {
		return nil, fmt.Errorf("journal: %s: %w", t.rec.ID, ErrClosed)
	}
	staged, err := scan(t.Dir())
	if err != nil {
		return nil, fmt.Errorf("journal: changes: %w", err)
	}
	var out []recChange
	for _, p := range sortedKeys(union(staged, t.rec.Base)) {
		now, inStage := staged[p]
		base, inBase := t.rec.Base[p]
		var c recChange
		switch {
		case inStage && !inBase:
			c = recChange{Change: Change{Path: p, Kind: Added}, NewSHA256: now.SHA256, Mode: now.Mode}
		case inStage && !now.same(base):
			c = recChange{Change: Change{Path: p, Kind: Modified}, NewSHA256: now.SHA256, Mode: base.Mode}
		case !inStage:
			c = recChange{Change: Change{Path: p, Kind: Deleted}, Mode: base.Mode}
		default:
			continue
		}
		old, new, err := t.sides(c.Change)
		if err != nil {
			return nil, fmt.Errorf("journal: changes %s: %w", p, err)
		}
		c.Added, c.Removed = linediff.Counts(old.Data, new.Data)
		out = append(out, c)
	}
	return out, nil
}

// sides loads the original and staged versions of a changed file.
func (t *Txn) sides(c Change) (old, new linediff.File, err error) {
	old = linediff.File{Path: c.Path, Absent: c.Kind == Added}
	new = linediff.File{Path: c.Path, Absent: c.Kind == Deleted}
	if !old.Absent {
		old.Data, err = os.ReadFile(filepath.Join(t.memDir, filepath.FromSlash(c.Path)))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		if err != nil {
			return old, new, err
		}
	}
	if !new.Absent {
		new.Data, err = os.ReadFile(filepath.Join(t.Dir(), filepath.FromSlash(c.Path)))
	}
	return old, new, err
}

func union(a, b map[string]fingerprint) map[string]fingerprint {
	out := make(map[string]fingerprint, len(a)+len(b))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range a {
		out[k] = v
	}
	return out
}
