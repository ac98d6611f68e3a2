package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
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

// changes is Changes with what Commit needs to record. Its cost follows
// what the runner wrote: a staged file whose stat is still the one recorded
// at Begin was not written and is neither read nor hashed; only written,
// added and deleted files are, and opaque ones only as a stream.
func (t *Txn) changes() ([]recChange, error) {
	if t.closed {
		return nil, fmt.Errorf("journal: %s: %w", t.rec.ID, ErrClosed)
	}
	if t.frozen && t.cached != nil {
		return slices.Clone(*t.cached), nil
	}
	out, err := t.scan()
	if err == nil && t.frozen {
		t.cached = &out
		out = slices.Clone(out)
	}
	return out, err
}

// Freeze says that staging is settled: the runner has returned, and from
// now on only the transaction's own methods change it. The changes are
// then found by one walk of staging and reused by Changes, Diff and Commit
// (the guards and the commit each ask), until Keep changes them.
func (t *Txn) Freeze() { t.frozen = true }

// scan walks staging once and finds the changes. The walk only compares
// stats; the files it cannot vouch for are read and hashed, and the
// changes' lines counted, on every core (scanWorkers): most of a scan's
// cost when a dream rewrote thousands of files.
func (t *Txn) scan() ([]recChange, error) {
	type written struct {
		rel, abs string
		base     fingerprint
		inBase   bool
	}
	var todo []written
	seen := make(map[string]bool, len(t.rec.Base))
	err := walkFiles(t.Dir(), func(rel, abs string, info fs.FileInfo) error {
		seen[rel] = true
		base, inBase := t.rec.Base[rel]
		if inBase {
			now := statPrint(info)
			// Unchanged, or (linked) still the original's inode: whatever
			// happened to that inode happened to the original, not by the
			// dream's hand, since dream's writers only ever replace.
			st, ok := t.rec.Staged[rel]
			if ok && st.sameStat(now) || t.rec.Linked && now.Ino != 0 && now.Ino == base.Ino {
				return nil
			}
		}
		todo = append(todo, written{rel, abs, base, inBase})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal: changes: %w", err)
	}
	type hashed struct {
		now, st, base fingerprint
		rebased       bool // base's content hash was filled in (hashOfBase)
		err           error
	}
	res := make([]hashed, len(todo))
	onWorkers(len(todo), scanWorkers(len(todo)), func(i int) error {
		w, r := todo[i], &res[i]
		if r.now, r.st, r.err = hashFile(w.abs); r.err == nil && w.inBase && w.base.SHA256 == "" {
			r.base, r.rebased = t.hashOfBase(w.rel, w.base)
		}
		return nil
	})
	var out []recChange
	t.hashedAt = map[string]fingerprint{}
	for i, w := range todo {
		r := res[i]
		if r.err != nil {
			return nil, fmt.Errorf("journal: changes: %w", r.err)
		}
		t.hashedAt[w.rel] = r.st
		if !w.inBase {
			out = append(out, recChange{Change: Change{Path: w.rel, Kind: Added}, NewSHA256: r.now.SHA256, Mode: r.now.Mode})
			continue
		}
		base := w.base
		if r.rebased {
			base, t.rec.Base[w.rel] = r.base, r.base
		}
		if base.SHA256 != "" && r.now.Size == base.Size && r.now.SHA256 == base.SHA256 {
			continue
		}
		out = append(out, recChange{Change: Change{Path: w.rel, Kind: Modified}, NewSHA256: r.now.SHA256, Mode: base.Mode})
	}
	for p, base := range t.rec.Base {
		if !seen[p] {
			if base.SHA256 == "" {
				t.baseHash(p, base)
			}
			out = append(out, recChange{Change: Change{Path: p, Kind: Deleted}, Mode: base.Mode})
		}
	}
	return t.finishScan(out)
}

// scanWorkers is how many goroutines read n staged files: one per core,
// and one for a few files, where starting them costs more than it saves.
func scanWorkers(n int) int {
	if n < 64 {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// finishScan drops the kept paths, sorts the changes and counts their
// lines, on every core (each worker holds one file's two sides at a time).
func (t *Txn) finishScan(out []recChange) ([]recChange, error) {
	if len(t.rec.Kept) > 0 {
		out = slices.DeleteFunc(out, func(c recChange) bool { return slices.Contains(t.rec.Kept, c.Path) })
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	errs := make([]error, len(out))
	onWorkers(len(out), scanWorkers(len(out)), func(i int) error {
		old, new, err := t.sides(out[i].Change)
		if err != nil {
			errs[i] = fmt.Errorf("journal: changes %s: %w", out[i].Path, err)
		} else if !old.Opaque && !new.Opaque {
			out[i].Added, out[i].Removed = linediff.Counts(old.Data, new.Data)
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// baseHash fills in the content hash of a base file staged by link, from
// the original, if the original is still the version the dream started
// from (same stat); otherwise the hash stays unknown and the commit treats
// the file as edited meanwhile.
func (t *Txn) baseHash(rel string, base fingerprint) fingerprint {
	if hashed, ok := t.hashOfBase(rel, base); ok {
		t.rec.Base[rel] = hashed
		return hashed
	}
	return base
}

// hashOfBase is baseHash without recording it: base with its content hash,
// and whether it got one. It changes nothing in t, so that scans can run
// it on several files at once.
func (t *Txn) hashOfBase(rel string, base fingerprint) (fingerprint, bool) {
	abs := filepath.Join(t.memDir, filepath.FromSlash(rel))
	info, err := os.Lstat(abs)
	if err != nil || !info.Mode().IsRegular() || !t.sameOriginal(statPrint(info), base) {
		return base, false
	}
	fp, err := fingerprintFile(abs)
	if err != nil || fp.Size != base.Size {
		return base, false
	}
	base.SHA256 = fp.SHA256
	return base, true
}

// sides loads the original and staged versions of a changed file; a side
// over OpaqueSize, or not a regular file, is marked opaque and not read.
func (t *Txn) sides(c Change) (old, new linediff.File, err error) {
	old = linediff.File{Path: c.Path, Absent: c.Kind == Added}
	new = linediff.File{Path: c.Path, Absent: c.Kind == Deleted}
	if !old.Absent {
		old, err = loadSide(old, filepath.Join(t.memDir, filepath.FromSlash(c.Path)))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		if err != nil {
			return old, new, err
		}
	}
	if !new.Absent {
		new, err = loadSide(new, filepath.Join(t.Dir(), filepath.FromSlash(c.Path)))
	}
	return old, new, err
}

// A side that is not a regular file (a symlink, a directory: what a user
// or a runner may have put at a memory path) is opaque too: it is
// never followed, so no diff shows a file outside the memory.
func loadSide(f linediff.File, path string) (linediff.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return f, err
	}
	if !info.Mode().IsRegular() || info.Size() > OpaqueSize {
		f.Opaque = true
		return f, nil
	}
	f.Data, err = os.ReadFile(path)
	return f, err
}

// Keep leaves rel (slash-separated, relative to the memory dir) out of the
// transaction: Changes no longer lists it and the commit neither writes nor
// deletes it, whatever staging holds. A guard that refuses one file uses it
// so that the refusal can never land anything in that file, not even a copy
// of a version the user saved while the dream ran. It is recorded, so a
// parked transaction keeps it.
func (t *Txn) Keep(rel string) error {
	if t.closed {
		return fmt.Errorf("journal: %s: %w", t.rec.ID, ErrClosed)
	}
	rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	if slices.Contains(t.rec.Kept, rel) {
		return nil
	}
	t.rec.Kept = append(t.rec.Kept, rel)
	t.cached = nil
	if err := writeRecord(t.txnDir, t.rec); err != nil {
		return fmt.Errorf("journal: keep %s: %w", rel, err)
	}
	return nil
}
