package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal/linediff"
)

// Commit lands the staged changes in the memory dir; see CommitWith. With
// no way to read a file's content before the dream, a file both the dream
// and someone else changed meanwhile makes it refuse with ErrConflict,
// changing nothing.
func (t *Txn) Commit() ([]Change, error) {
	res, err := t.CommitWith(CommitOptions{})
	return res.Applied, err
}

// CommitOptions tune CommitWith.
type CommitOptions struct {
	// Base returns a file's content as it was when the dream began (for
	// dream, from the audit history, which records hand edits right before
	// every dream); ok is false when it had none. With it, a file both the
	// dream and the user changed during the dream is merged.
	Base func(path string) (data []byte, ok bool, err error)
	// BeforeApply, if set, is called with the files about to be merged,
	// while the memory dir still holds the user's versions, so the caller
	// can record those as the user's before the merge lands.
	BeforeApply func(merged []string) error
	// Hold names changed files (slash paths) that must not land with the
	// rest, each with the reason: they are parked for review with the files
	// the user also changed (see CommitResult.ForReview), and the rest of
	// the transaction lands as one commit. The review's ParkReason is the
	// reasons, the held files' first, each followed by its path.
	Hold map[string]string
	// ReviewUnits is the account (see Txn.SetUnits) of what is held, kept
	// with the review the commit parks.
	ReviewUnits []json.RawMessage
}

// CommitResult says what a commit did.
type CommitResult struct {
	// Applied are the changes that landed.
	Applied []Change
	// Merged are files the user edited during the dream whose edit and the
	// dream's touched different lines: both landed.
	Merged []string
	// ForReview are files where the user's edit and the dream's overlap,
	// and the files CommitOptions.Hold names: the memory's version was kept
	// and the dream's is staged for review in the parked transaction
	// ReviewID (`dream diff`, `apply`, `discard`).
	ForReview []string
	ReviewID  string
}

// CommitWith lands the staged changes in the memory dir. Files someone
// edited during the dream that the dream did not change are left as edited;
// a file both changed is merged three ways when their hunks do not overlap
// (and Base is set), else the user's version is kept and the dream's change
// parked for review: neither side is lost. It refuses with ErrConflict,
// changing nothing, when a path's directory became a symlink or a file, and
// for files both changed when it cannot merge them. Otherwise it makes the
// list of changes durable (state committing) before touching memory, writes
// every new file to a temporary file beside its target before renaming any
// (so a full disk fails before the first rename, leaving memory as it was),
// renames them, removes deleted files (their old content is kept by the
// audit history, which the caller records first), syncs the directories and
// finally drops the transaction. If it fails after the first rename, the
// transaction stays committing and Recover finishes it.
func (t *Txn) CommitWith(o CommitOptions) (CommitResult, error) {
	var res CommitResult
	if t.closed {
		return res, fmt.Errorf("journal: commit %s: %w", t.rec.ID, ErrClosed)
	}
	if t.rec.State != StateStaging && t.rec.State != StateParked {
		return res, fmt.Errorf("journal: commit %s: state is %s", t.rec.ID, t.rec.State)
	}
	chs, err := t.changes()
	if err != nil {
		return res, err
	}
	if chs, err = t.settle(chs, o, &res); err != nil {
		return res, err
	}
	if len(res.Merged) > 0 && o.BeforeApply != nil {
		if err := o.BeforeApply(res.Merged); err != nil {
			return res, fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
		}
	}
	if len(chs) == 0 {
		return res, t.finish()
	}
	// The staged content must be durable before the record that points at
	// it: after a power cut, roll-forward needs every staged file, and so
	// every staged file's directory entry.
	if err := t.syncStaged(chs); err != nil {
		return res, fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
	}
	full := t.rec
	rec := t.rec
	rec.State = StateCommitting
	rec.Changes = chs
	// A roll-forward needs the base of the changed files only: the record
	// written (and synced) for the commit costs the change, not the
	// memory's size.
	rec.Base, rec.Staged = baseOfChanges(t.rec.Base, chs), nil
	if err := writeRecord(t.txnDir, rec); err != nil {
		return res, fmt.Errorf("journal: commit: %w", err)
	}
	t.rec = rec
	crashPoint("commit:record")
	skipped, err := apply(t.memDir, t.Dir(), rec, t.hashedAt)
	if err != nil {
		var nr *notRenamedError
		if errors.As(err, &nr) {
			// Nothing reached the memory dir: the commit is abandoned, not
			// left for a roll-forward.
			back := full
			back.State, back.Changes = StateStaging, nil
			if werr := writeRecord(t.txnDir, back); werr == nil {
				t.rec = back
			}
			return res, fmt.Errorf("journal: commit %s: nothing was changed: %w", t.rec.ID, nr.err)
		}
		return res, fmt.Errorf("journal: commit %s (left committing; Recover will finish it): %w", t.rec.ID, err)
	}
	if err := t.finish(); err != nil {
		return res, err
	}
	applied := plain(chs)
	if len(skipped) > 0 {
		kept := applied[:0]
		for _, c := range applied {
			if !contains(skipped, c.Path) {
				kept = append(kept, c)
			}
		}
		res.Applied = kept
		return res, fmt.Errorf("journal: commit %s: %w: edited while committing, kept as edited: %s", t.rec.ID, ErrConflict, strings.Join(skipped, ", "))
	}
	res.Applied = applied
	return res, nil
}

// settle takes out of chs what must not land now and returns what does:
// the changes o.Hold names and those of files someone edited during the
// dream that cannot be merged are parked for review (res.ReviewID,
// res.ForReview); the merged ones are in res.Merged. Without o.Base, a
// file both changed is ErrConflict.
func (t *Txn) settle(chs []recChange, o CommitOptions, res *CommitResult) ([]recChange, error) {
	var review []recChange
	var reasons []string
	if len(o.Hold) > 0 {
		rest := chs[:0:0]
		for _, c := range chs {
			if why, ok := o.Hold[c.Path]; ok {
				review = append(review, c)
				reasons = append(reasons, why+" ("+c.Path+")")
				continue
			}
			rest = append(rest, c)
		}
		chs = rest
	}
	both, err := t.checkConflicts(chs)
	if err != nil {
		return nil, err
	}
	if len(both) > 0 {
		if o.Base == nil {
			bad := make([]string, 0, len(both))
			for _, b := range both {
				bad = append(bad, b.why)
			}
			return nil, fmt.Errorf("journal: commit %s: %w: %s", t.rec.ID, ErrConflict, strings.Join(bad, ", "))
		}
		var edited []recChange
		chs, res.Merged, edited, err = t.resolve(chs, both, o.Base)
		if err != nil {
			return nil, err
		}
		for _, c := range edited {
			review = append(review, c)
			reasons = append(reasons, "edited during the dream where the dream changed it too ("+c.Path+")")
		}
	}
	if len(review) > 0 {
		if res.ReviewID, err = t.parkForReview(review, strings.Join(reasons, "; "), o.ReviewUnits); err != nil {
			return nil, err
		}
		for _, c := range review {
			res.ForReview = append(res.ForReview, c.Path)
		}
	}
	return chs, nil
}

// bothChanged is a file the dream changed that someone else changed too.
type bothChanged struct {
	path string
	why  string
}

// checkConflicts looks at the files the dream changes. A path whose
// directory is now a symlink or a file refuses the whole commit. A file the
// user also changed (edited, deleted, or created at a path the dream adds)
// is returned for resolve. Files the dream did not change are not looked
// at: a hand edit to them simply stays.
func (t *Txn) checkConflicts(chs []recChange) ([]bothChanged, error) {
	root, err := os.OpenRoot(t.memDir)
	if err != nil {
		return nil, fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
	}
	defer root.Close()
	var bad []string
	var both []bothChanged
	for _, c := range chs {
		rel := filepath.FromSlash(c.Path)
		if !fsutil.RealParents(root, rel) {
			bad = append(bad, c.Path+" (its directory is a symlink or a file in the memory dir)")
			continue
		}
		if c.Kind == Added {
			if _, err := root.Lstat(rel); err == nil {
				both = append(both, bothChanged{c.Path, c.Path + " (created)"})
			}
			continue
		}
		base := t.rec.Base[c.Path]
		info, err := root.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			both = append(both, bothChanged{c.Path, c.Path + " (deleted)"})
			continue
		case err != nil:
			return nil, fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
		case !info.Mode().IsRegular():
			both = append(both, bothChanged{c.Path, c.Path + " (edited)"})
			continue
		}
		if t.sameOriginal(statPrint(info), base) {
			continue
		}
		cur, _, err := fingerprintIn(root, rel)
		if err != nil {
			return nil, fmt.Errorf("journal: commit %s: %w", t.rec.ID, err)
		}
		if base.SHA256 == "" || !cur.same(base) {
			both = append(both, bothChanged{c.Path, c.Path + " (edited)"})
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("journal: commit %s: %w: %s", t.rec.ID, ErrConflict, strings.Join(bad, ", "))
	}
	sort.Slice(both, func(i, j int) bool { return both[i].path < both[j].path })
	return both, nil
}

// resolve merges each file both sides changed, or sets it aside for
// review: it returns the changes to apply (merged ones with their merged
// content staged), the merged paths and the changes to park.
func (t *Txn) resolve(chs []recChange, both []bothChanged, baseOf func(string) ([]byte, bool, error)) (apply []recChange, merged []string, review []recChange, err error) {
	isBoth := make(map[string]bool, len(both))
	for _, b := range both {
		isBoth[b.path] = true
	}
	for _, c := range chs {
		if !isBoth[c.Path] {
			apply = append(apply, c)
			continue
		}
		m, ok, err := t.merge(c, baseOf)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("journal: commit %s: merging %s: %w", t.rec.ID, c.Path, err)
		}
		if !ok {
			review = append(review, c)
			continue
		}
		apply = append(apply, m)
		merged = append(merged, c.Path)
	}
	return apply, merged, review, nil
}

// merge three-way merges the user's and the dream's versions of a modified
// text file on their common base. ok is false when it cannot: the user
// deleted the file, a side is opaque or binary, or the hunks overlap.
func (t *Txn) merge(c recChange, baseOf func(string) ([]byte, bool, error)) (recChange, bool, error) {
	if c.Kind != Modified {
		return c, false, nil
	}
	rel := filepath.FromSlash(c.Path)
	userPath := filepath.Join(t.memDir, rel)
	dreamPath := filepath.Join(t.Dir(), rel)
	for _, p := range []string{userPath, dreamPath} {
		info, err := os.Lstat(p)
		if err != nil || !info.Mode().IsRegular() || info.Size() > OpaqueSize {
			return c, false, nil
		}
	}
	base, ok, err := baseOf(c.Path)
	if err != nil || !ok || len(base) > OpaqueSize {
		return c, false, err
	}
	user, err := os.ReadFile(userPath)
	if err != nil {
		return c, false, err
	}
	dream, err := os.ReadFile(dreamPath)
	if err != nil {
		return c, false, err
	}
	if linediff.IsBinary(base) || linediff.IsBinary(user) || linediff.IsBinary(dream) {
		return c, false, nil
	}
	lines, conflicts := linediff.Merge3(linediff.Split(base), linediff.Split(user), linediff.Split(dream))
	if len(conflicts) > 0 {
		return c, false, nil
	}
	out := []byte(strings.Join(lines, ""))
	// The merged text replaces the dream's in staging, and the user's
	// version becomes the base the commit (or a roll-forward) expects.
	if err := fsutil.WriteFileAtomic(dreamPath, out, c.Mode.Perm()|0o200, true); err != nil {
		return c, false, err
	}
	if info, err := os.Lstat(dreamPath); err == nil && t.hashedAt != nil {
		t.hashedAt[c.Path] = statPrint(info)
	}
	cur, err := fingerprintFile(userPath)
	if err != nil {
		return c, false, err
	}
	if info, err := os.Lstat(userPath); err == nil {
		st := statPrint(info)
		cur.Ino, cur.MtimeNs, cur.CtimeNs = st.Ino, st.MtimeNs, st.CtimeNs
	}
	t.rec.Base[c.Path] = cur
	sum := sha256.Sum256(out)
	c.NewSHA256 = hex.EncodeToString(sum[:])
	c.Added, c.Removed = linediff.Counts(user, out)
	return c, true, nil
}

// parkForReview keeps the dream's version of files the user also changed,
// or that the caller holds (CommitOptions.Hold), in a parked transaction of
// their own, "<id>-review", whose base is the memory's version now: `dream
// diff` shows what the dream would change on top of it, `dream apply` lands
// it, `dream discard` drops it. reason is its ParkReason, units its Units.
func (t *Txn) parkForReview(chs []recChange, reason string, units []json.RawMessage) (string, error) {
	id := t.rec.ID + "-review"
	dir := filepath.Join(filepath.Dir(t.txnDir), id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("journal: staging %s for review: %w", id, err)
	}
	r := record{ID: id, MemoryDir: t.memDir, PID: os.Getpid(), State: StateStaging, CreatedAt: time.Now().UTC(), Base: map[string]fingerprint{}, Staged: map[string]fingerprint{}}
	fail := func(err error) (string, error) {
		os.RemoveAll(dir)
		return "", fmt.Errorf("journal: staging %s for review: %w", id, err)
	}
	if err := writeRecord(dir, r); err != nil {
		return fail(err)
	}
	stage := filepath.Join(dir, "stage")
	if err := os.Mkdir(stage, 0o700); err != nil {
		return fail(err)
	}
	for _, c := range chs {
		rel := filepath.FromSlash(c.Path)
		if info, err := os.Lstat(filepath.Join(t.memDir, rel)); err == nil && info.Mode().IsRegular() {
			fp, err := fingerprintFile(filepath.Join(t.memDir, rel))
			if err != nil {
				return fail(err)
			}
			st := statPrint(info)
			fp.Ino, fp.MtimeNs, fp.CtimeNs = st.Ino, st.MtimeNs, st.CtimeNs
			r.Base[c.Path] = fp
		}
		if c.Kind == Deleted {
			continue
		}
		target := filepath.Join(stage, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fail(err)
		}
		if _, err := copyHashed(filepath.Join(t.Dir(), rel), target, c.Mode.Perm()); err != nil {
			return fail(err)
		}
	}
	r.State, r.ParkReason, r.Units = StateParked, reason, units
	if err := writeRecord(dir, r); err != nil {
		return fail(err)
	}
	return id, nil
}

// baseOfChanges is the part of base the changes need.
func baseOfChanges(base map[string]fingerprint, chs []recChange) map[string]fingerprint {
	out := make(map[string]fingerprint, len(chs))
	for _, c := range chs {
		if fp, ok := base[c.Path]; ok {
			out[c.Path] = fp
		}
	}
	return out
}

// finish marks the transaction committed and removes it.
func (t *Txn) finish() error {
	rec := t.rec
	rec.State = StateCommitted
	if err := writeRecord(t.txnDir, rec); err != nil {
		return fmt.Errorf("journal: finish: %w", err)
	}
	t.rec = rec
	crashPoint("commit:marked")
	if err := os.RemoveAll(t.txnDir); err != nil {
		return fmt.Errorf("journal: finish %s: %w", t.rec.ID, err)
	}
	t.closed = true
	return nil
}

// install is one file the commit puts in place: a temporary name beside
// its target, renamed over it once every file has one.
type install struct {
	tmp, rel string
	linked   bool // the staged file itself, flushed in staging already
}

// renameWorkers is how many directories a commit renames into side by
// side. A rename holds its directory's lock, so renames in one directory
// cannot overlap; those in others can, and a rename over a file also frees
// the file it replaces, which on a file system mounted with discard waits
// for the device.
const renameWorkers = 8

// renameInstalls renames every install over its target with rename: those
// in one directory one after the other, in order, and directories side by
// side. renamed[i] is whether installs[i] was renamed. After a failure no
// directory starts another rename; err is that failure (of several at
// once, the lowest-indexed), and a caller decides by renamed, not by which
// file failed. The crash point "commit:rename:N" follows the N-th rename
// done, in whichever directory.
func renameInstalls(installs []install, rename func(install) error) (renamed []bool, err error) {
	renamed = make([]bool, len(installs))
	byDir := map[string][]int{}
	var order []string
	for i, in := range installs {
		d := filepath.Dir(in.rel)
		if _, ok := byDir[d]; !ok {
			order = append(order, d)
		}
		byDir[d] = append(byDir[d], i)
	}
	var (
		done   atomic.Int64
		failed atomic.Bool
		next   atomic.Int64
		mu     sync.Mutex
		first  = -1
		wg     sync.WaitGroup
	)
	for range min(renameWorkers, len(order)) {
		wg.Go(func() {
			for {
				g := int(next.Add(1) - 1)
				if g >= len(order) {
					return
				}
				for _, i := range byDir[order[g]] {
					if failed.Load() {
						return
					}
					in := installs[i]
					if rerr := rename(in); rerr != nil {
						mu.Lock()
						if first < 0 || i < first {
							first, err = i, fmt.Errorf("install %s: %w", in.rel, rerr)
						}
						mu.Unlock()
						failed.Store(true)
						return
					}
					renamed[i] = true
					crashPoint("commit:rename:%d", done.Add(1))
				}
			}
		})
	}
	wg.Wait()
	return renamed, err
}

// notRenamedError is a failure before the first rename: the memory dir is
// as it was (every temporary file removed).
type notRenamedError struct{ err error }

func (e *notRenamedError) Error() string { return e.err.Error() }
func (e *notRenamedError) Unwrap() error { return e.err }

// apply performs the recorded changes in two passes: first every new
// file's content is put under a temporary name beside its target (the
// staged file hard-linked there for a live commit of a linked staging, see
// linkTemp, else copied and flushed), then the temporaries are renamed
// into place and deletions done. A failure in the first pass (a full disk,
// a quota, a staged file written after it was checked) removes the
// temporaries and returns a *notRenamedError: nothing changed. Each step is
// idempotent: a file that already holds its new content (or is already
// gone) is left as is, so a roll-forward can redo the whole list. A file
// that holds neither its base nor its new content was edited by hand after
// the record was written; it is left alone and returned in skipped. Every
// file operation goes through an os.Root on the memory dir: a path that
// crosses a symlink out of it fails instead of writing elsewhere.
//
// frozen is, for a live commit, each staged file's stat when its content
// was hashed (nil for a roll-forward, which checks content).
func apply(memDir, stageDir string, rec record, frozen map[string]fingerprint) (skipped []string, err error) {
	root, err := os.OpenRoot(memDir)
	if err != nil {
		return nil, &notRenamedError{err}
	}
	defer root.Close()
	// putBack undoes the first pass for the given installs: their
	// temporary names are removed.
	putBack := func(ins []install) {
		for _, in := range ins {
			root.Remove(in.tmp)
		}
	}
	plan, err := prepareInstalls(root, stageDir, rec, frozen)
	skipped, installs, deletes := plan.skipped, plan.installs, plan.deletes
	if err != nil {
		putBack(installs)
		return skipped, &notRenamedError{err}
	}
	if err := flushTemps(root, memDir, installs); err != nil {
		putBack(installs)
		return skipped, &notRenamedError{err}
	}
	dirs := map[string]bool{".": true}
	for d := range plan.newDirs {
		dirs[d] = true
	}
	for _, in := range installs {
		dirs[filepath.Dir(in.rel)] = true
	}
	renamed, err := renameHolding(root, installs)
	if err != nil {
		var left []install
		for i, in := range installs {
			if !renamed[i] {
				left = append(left, in)
			}
		}
		putBack(left)
		if len(left) == len(installs) {
			return skipped, &notRenamedError{err}
		}
		return skipped, err
	}
	for i, c := range deletes {
		rel := filepath.FromSlash(c.Path)
		if err := root.Remove(rel); err != nil {
			return skipped, fmt.Errorf("delete %s: %w", c.Path, err)
		}
		crashPoint("commit:delete:%d", i+1)
		dirs[filepath.Dir(rel)] = true
		removeEmptyParents(root, filepath.Dir(rel), dirs)
	}
	if err := syncDirsIn(root, dirs); err != nil {
		return skipped, err
	}
	crashPoint("commit:synced")
	return skipped, nil
}

// commitPlan is apply's first pass: the temporary files put beside their
// targets, the deletions to do, the files skipped (edited by hand since
// the record) and the directories the installs will create.
type commitPlan struct {
	installs []install
	deletes  []recChange
	skipped  []string
	newDirs  map[string]bool
}

// prepareInstalls is apply's first pass over rec's changes: each new
// content goes under a temporary name beside its target (linked from the
// staging copy where it can be, else copied); a change already done is
// passed over, one whose file holds neither its base nor its new content
// skipped. On an error the plan holds the temporaries made so far, for the
// caller to remove.
func prepareInstalls(root *os.Root, stageDir string, rec record, frozen map[string]fingerprint) (commitPlan, error) {
	p := commitPlan{newDirs: map[string]bool{}}
	// Directories the install creates: their parents' entries must be
	// synced too, or a power cut can lose a whole new subtree.
	seenDirs := map[string]bool{".": true}
	noteDir := func(rel string) {
		dir := filepath.Dir(rel)
		if seenDirs[dir] {
			return
		}
		seenDirs[dir] = true
		if _, err := root.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			for d := filepath.Dir(dir); !p.newDirs[d]; d = filepath.Dir(d) {
				p.newDirs[d] = true
				if d == "." {
					break
				}
			}
		}
	}
	for _, c := range rec.Changes {
		rel := filepath.FromSlash(c.Path)
		base, inBase := rec.Base[c.Path]
		cur, exists, err := currentIn(root, rel, base, inBase, rec.Linked)
		if err != nil {
			return p, err
		}
		switch c.Kind {
		case Added, Modified:
			if exists && cur.SHA256 == c.NewSHA256 {
				continue
			}
			ready := (c.Kind == Added && !exists) || (c.Kind == Modified && exists && inBase && cur.same(base))
			if !ready {
				p.skipped = append(p.skipped, c.Path)
				continue
			}
			noteDir(rel)
			src := filepath.Join(stageDir, rel)
			n := len(p.installs) + 1
			if rec.Linked && frozen != nil {
				tmp, ok, err := linkTemp(root, src, rel, c.Mode, n, frozen[c.Path])
				if err != nil {
					return p, err
				}
				if ok {
					p.installs = append(p.installs, install{tmp: tmp, rel: rel, linked: true})
					continue
				}
			}
			tmp, err := prepareTemp(root, src, rel, c.Mode, n, false, frozen[c.Path])
			if err != nil {
				return p, err
			}
			p.installs = append(p.installs, install{tmp: tmp, rel: rel})
		case Deleted:
			if !exists {
				continue
			}
			if !inBase || !cur.same(base) {
				p.skipped = append(p.skipped, c.Path)
				continue
			}
			p.deletes = append(p.deletes, c)
		}
	}
	return p, nil
}

// flushTemps flushes the temporary files of installs before any rename,
// side by side when there are many, so the file system commits them in a
// few journal transactions instead of one per file (or with one syncfs of
// the memory's file system when there are very many). A linked file's data
// was flushed in staging (syncStaged) and is not flushed again.
func flushTemps(root *os.Root, memDir string, installs []install) (err error) {
	var toSync []string
	for _, in := range installs {
		if !in.linked {
			toSync = append(toSync, in.tmp)
		}
	}
	if len(toSync) > 0 {
		syncOne := func(i int) error {
			f, err := root.Open(toSync[i])
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Sync()
		}
		flushed := false
		if len(toSync) >= syncFSFrom && fsutil.SameFS(memDir, parentsIn(memDir, toSync)) {
			flushed, err = syncFS(memDir)
		}
		switch {
		case flushed:
		case len(toSync) >= batchSync:
			err = syncAll(len(toSync), syncOne)
		default:
			for i := range toSync {
				if err = syncOne(i); err != nil {
					break
				}
			}
		}
		return err
	}
	return nil
}

// renameHolding renames each install's temporary file over its target
// (renamed: which were). A rename over a file frees the file it replaces
// under its directory's lock, and where a free waits for the device (a
// disk mounted with online discard: about half a millisecond a file) the
// renames of a flat memory wait for each other's frees. So each replaced
// file is held open across its rename and let go by one of a few
// goroutines, side by side: the last close frees it, outside the lock.
func renameHolding(root *os.Root, installs []install) (renamed []bool, err error) {
	held := make(chan *os.File, 4*renameWorkers)
	var closers sync.WaitGroup
	for range renameWorkers {
		closers.Go(func() {
			for f := range held {
				f.Close()
			}
		})
	}
	renamed, err = renameInstalls(installs, func(in install) error {
		f, _ := root.OpenFile(in.rel, holdFlags, 0)
		err := root.Rename(in.tmp, in.rel)
		if f != nil {
			held <- f
		}
		return err
	})
	close(held)
	closers.Wait()
	return renamed, err
}

// syncDirsIn flushes the directories dirs that still exist, side by side:
// a file system groups concurrent flushes into one journal commit.
func syncDirsIn(root *os.Root, dirs map[string]bool) error {
	var syncDirs []string
	for _, d := range sortedKeys(dirs) {
		if _, err := root.Stat(d); err == nil { // else an emptied subdir that was removed
			syncDirs = append(syncDirs, d)
		}
	}
	return syncAll(len(syncDirs), func(i int) error { return syncDirIn(root, syncDirs[i]) })
}

// currentIn is fingerprintIn, except that a file whose stat is still its
// base's (see sameOriginal) is its base without being read: a commit of
// 30,000 files then reads each original once (for its diff), not twice.
func currentIn(root *os.Root, rel string, base fingerprint, inBase, linked bool) (fingerprint, bool, error) {
	if inBase && base.Ino != 0 {
		if info, err := root.Lstat(rel); err == nil && info.Mode().IsRegular() {
			cur := statPrint(info)
			same := cur.sameStat(base)
			if linked {
				same = cur.Ino == base.Ino && cur.Size == base.Size && cur.MtimeNs == base.MtimeNs
			}
			if same {
				return base, true, nil
			}
		}
	}
	return fingerprintIn(root, rel)
}

// fingerprintIn is currentFingerprint through root: a path that is not a
// regular file (a symlink, a directory) counts as existing and different
// from any recorded content, so it is never overwritten or removed.
func fingerprintIn(root *os.Root, rel string) (fp fingerprint, exists bool, err error) {
	info, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return fingerprint{}, false, nil
	}
	if err != nil {
		return fingerprint{}, false, err
	}
	if !info.Mode().IsRegular() {
		return fingerprint{SHA256: "not a regular file: " + info.Mode().String()}, true, nil
	}
	f, err := root.Open(rel)
	if err != nil {
		return fingerprint{}, false, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := copyStream(h, f)
	if err != nil {
		return fingerprint{}, false, fmt.Errorf("hash %s: %w", rel, err)
	}
	return fingerprint{Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), Mode: info.Mode().Perm()}, true, nil
}

// removeEmptyParents removes directories a deletion left empty, up to but
// not including the memory dir, marking their parents for syncing.
func removeEmptyParents(root *os.Root, dir string, dirs map[string]bool) {
	for dir != "." && dir != "" {
		if root.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
		dirs[dir] = true
	}
}

// batchSync is the number of files from which a commit fsyncs its files
// concurrently rather than one after the other.
const batchSync = 32

// syncWorkers is how many fsyncs a batched commit keeps in flight: enough
// for the file system to group them into few journal commits, few enough
// not to swamp the disk queue. The cost still follows the change: only the
// dream's own files are flushed.
const syncWorkers = 16

// syncFSFrom is the number of files from which a commit flushes the whole
// file system with one syncfs instead of each file and directory (a
// 3,000-file commit: 0.27-0.29 s against 0.35 s, measured when it was
// chosen). Below it, flushing whatever else is dirty on the
// file system could cost more than the files themselves.
const syncFSFrom = 512

// parentsIn is the directories, under dir, that hold the files rels.
func parentsIn(dir string, rels []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, rel := range rels {
		if d := filepath.Join(dir, filepath.Dir(rel)); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// syncFS is fsutil.SyncFS; a variable so that tests can see when a commit
// uses it, and make it decline.
var syncFS = fsutil.SyncFS

// syncAll runs fn(i) for i in [0, n) on syncWorkers goroutines and
// returns the first error.
func syncAll(n int, fn func(i int) error) error { return onWorkers(n, syncWorkers, fn) }

// onWorkers runs fn(i) for i in [0, n) on up to workers goroutines (in
// order on the caller's when workers is 1) and returns the first error; a
// goroutine stops at its error, the others finish what they took.
func onWorkers(n, workers int, fn func(i int) error) error {
	if workers <= 1 {
		for i := range n {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  atomic.Int64
	)
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// syncStaged makes every staged file of chs and its directory durable: with
// one syncfs of the staging's file system when there are many (and every
// directory holding them is on it), else file by file.
func (t *Txn) syncStaged(chs []recChange) error {
	var files []string
	dirs := map[string]bool{}
	for _, c := range chs {
		if c.Kind != Deleted {
			rel := filepath.FromSlash(c.Path)
			files = append(files, filepath.Join(t.Dir(), rel))
			// Every directory up to staging itself: the runner made them,
			// and a file is only found after a power cut if each of its
			// directories' entries is durable too.
			for d := filepath.Dir(rel); !dirs[filepath.Join(t.Dir(), d)]; d = filepath.Dir(d) {
				dirs[filepath.Join(t.Dir(), d)] = true
				if d == "." {
					break
				}
			}
		}
	}
	syncDirs := sortedKeys(dirs)
	if len(files) >= syncFSFrom && fsutil.SameFS(t.Dir(), syncDirs) {
		if ok, err := syncFS(t.Dir()); ok {
			return err
		}
	}
	if len(files) >= batchSync {
		if err := syncAll(len(files), func(i int) error { return syncFile(files[i]) }); err != nil {
			return err
		}
	} else {
		for _, p := range files {
			if err := syncFile(p); err != nil {
				return err
			}
		}
	}
	return syncAll(len(syncDirs), func(i int) error { return syncDirAt(syncDirs[i]) })
}

// syncDirIn and syncDirAt flush a directory (in the memory's root, and by
// path); variables only so that tests can see which are flushed.
var (
	syncDirIn = fsutil.SyncDirIn
	syncDirAt = SyncDir
)

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
