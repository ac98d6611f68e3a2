package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/journal/linediff"
)

// version is one file at some point: its blob id and size in the history,
// or absent when it did not exist. The content (data) is loaded only to
// merge, so an undo of a dream that touched a 200 MB file never holds it:
// versions compare by blob id, and a restored version is streamed from git
// into the memory file.
type version struct {
	id     string // blob id; "" for content made here (a merge)
	size   int64
	data   []byte
	absent bool
}

func (v version) equal(w version) bool {
	if v.absent || w.absent {
		return v.absent == w.absent
	}
	if v.id != "" && w.id != "" {
		return v.id == w.id
	}
	return bytes.Equal(v.data, w.data)
}

// undoesTrailer names, in an undo's commit, the change it undid.
const undoesTrailer = "Dream-Undoes"

// maxMergeSize is the largest version Undo loads to merge line by line;
// past it (journal.OpaqueSize, a pasted log) a file changed after the
// dream is a conflict, as a binary one is.
const maxMergeSize = journal.OpaqueSize

// Undo brings the memory dir back to its state before the dream id, as a new
// audited change of kind "undo". Hand edits are recorded first. The dream's
// changes are reverted hunk by hunk on top of the current files, so later
// edits elsewhere survive; where a later change touches the same lines (or
// the file was deleted, recreated, or is binary) Undo refuses with
// ErrConflict naming the files and lines, unless force, in which case those
// files are restored wholesale to their content before the dream. Each file
// is written atomically; files the dream added are deleted (they stay in the
// history) and files it deleted are restored.
func (h *History) Undo(ctx context.Context, id string, force bool) (Entry, error) {
	target, err := h.resolve(ctx, id)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: undo: %w", err)
	}
	tid := entryID(target)
	parent, err := h.git(ctx, nil, "rev-parse", "--verify", "-q", target.sha+"^")
	if err != nil && exitCode(err) > 0 && newEntry(target).Kind != KindHand {
		// A change recorded first (a dream on a dir that was empty, a
		// job's first report): before it there was nothing, the empty
		// tree, and undoing it removes what it added.
		parent, err = h.git(ctx, nil, "mktree")
	}
	if err != nil {
		if exitCode(err) > 0 {
			return Entry{}, fmt.Errorf("audit: undo %s: it is the first recorded state; there is nothing before it to restore", tid)
		}
		return Entry{}, fmt.Errorf("audit: undo %s: %w", tid, err)
	}
	parentSHA := strings.TrimSpace(string(parent))
	if _, err := h.RecordHandEdits(ctx); err != nil {
		return Entry{}, fmt.Errorf("audit: undo %s: %w", tid, err)
	}
	out, err := h.git(ctx, nil, "diff-tree", "-r", "--no-commit-id", "--no-renames", "--no-ext-diff", "-z", "--raw", "--numstat", parentSHA, target.sha)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: undo %s: %w", tid, err)
	}
	files, err := parseRawNumstat(out)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: undo %s: %w", tid, err)
	}
	results := map[string]version{}
	var problems []string
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	all, err := h.versionsOf(ctx, paths, parentSHA, target.sha, "HEAD")
	if err != nil {
		return Entry{}, fmt.Errorf("audit: undo %s: %w", tid, err)
	}
	if err := h.loadForMerge(ctx, all); err != nil {
		return Entry{}, fmt.Errorf("audit: undo %s: %w", tid, err)
	}
	for _, f := range files {
		vs := all[f.Path]
		res, why := undoFile(vs[0], vs[1], vs[2])
		if why != "" {
			problems = append(problems, f.Path+": "+why)
			if !force {
				continue
			}
			res = vs[0] // restore wholesale to before the dream
		}
		results[f.Path] = res
	}
	if len(problems) > 0 && !force {
		return Entry{}, fmt.Errorf("audit: undo %s: %w: %s (use force to restore these files to their state before the dream)", tid, ErrConflict, strings.Join(problems, "; "))
	}
	removed, err := h.writeResults(ctx, results, all)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: undo %s: %w", tid, err)
	}
	h.removeEmptiedDirs(ctx, removed, parentSHA, newEntry(target).StartedAt)
	undoID := "undo-" + tid + "-" + time.Now().UTC().Format("20060102T150405.000")
	sha, err := h.record(ctx, Meta{DreamID: undoID, Kind: KindUndo, Status: "completed", StartedAt: time.Now(), Paths: paths}, [][2]string{{undoesTrailer, tid}})
	if err != nil {
		return Entry{}, fmt.Errorf("audit: undo %s: record: %w", tid, err)
	}
	if sha == "" {
		return Entry{}, fmt.Errorf("audit: undo %s: the memory already matches its state before that dream", tid)
	}
	return h.Show(ctx, sha)
}

// undoFile computes the undone content of one file from its versions
// before the dream, after it and now. why is non-empty when later changes
// conflict with the undo.
func undoFile(base, dream, cur version) (version, string) {
	switch {
	case cur.equal(dream), cur.equal(base):
		return base, ""
	case cur.absent:
		return version{}, "deleted after the dream"
	case dream.absent:
		return version{}, "created again after the dream deleted it"
	case base.absent:
		return version{}, "edited after the dream created it"
	case base.data == nil && base.size > 0 || dream.data == nil && dream.size > 0 || cur.data == nil && cur.size > 0:
		return version{}, "too large to merge and changed after the dream"
	case linediff.IsBinary(base.data) || linediff.IsBinary(dream.data) || linediff.IsBinary(cur.data):
		return version{}, "binary file changed after the dream"
	}
	merged, conflicts := linediff.Merge3(linediff.Split(dream.data), linediff.Split(cur.data), linediff.Split(base.data))
	if len(conflicts) > 0 {
		var parts []string
		for _, c := range conflicts {
			parts = append(parts, lineRange(c))
		}
		return version{}, "lines " + strings.Join(parts, ", ") + " were changed both by the dream and later"
	}
	return version{data: []byte(strings.Join(merged, ""))}, ""
}

func lineRange(r linediff.Region) string {
	switch {
	case r.A1-r.A0 <= 0:
		return fmt.Sprintf("after %d", r.A0)
	case r.A1-r.A0 == 1:
		return fmt.Sprintf("%d", r.A0+1)
	}
	return fmt.Sprintf("%d-%d", r.A0+1, r.A1)
}

// versionsOf finds every path at each rev: one `git ls-tree -l` per rev
// gives the blob ids and sizes, and no content is read. Paths travel as
// literal NUL-separated arguments, so a name with a newline (or any byte
// git can store) is found like any other. A path absent at a rev comes back
// absent.
func (h *History) versionsOf(ctx context.Context, paths []string, revs ...string) (map[string][]version, error) {
	blobs := make([]map[string]version, len(revs))
	for i, rev := range revs {
		out, err := h.gitEnv(ctx, []string{"GIT_LITERAL_PATHSPECS=1"}, nil, append([]string{"ls-tree", "-r", "-l", "-z", "--full-tree", rev, "--"}, paths...)...)
		if err != nil {
			return nil, err
		}
		if blobs[i], err = parseLsTreeLong(out); err != nil {
			return nil, err
		}
	}
	res := make(map[string][]version, len(paths))
	for _, p := range paths {
		vs := make([]version, len(revs))
		for i := range revs {
			if v, ok := blobs[i][p]; ok {
				vs[i] = v
			} else {
				vs[i] = version{absent: true}
			}
		}
		res[p] = vs
	}
	return res, nil
}

// loadForMerge reads, with one `git cat-file --batch`, the contents of the
// files whose three versions all differ (the only ones merged line by
// line) when none is over maxMergeSize.
func (h *History) loadForMerge(ctx context.Context, all map[string][]version) error {
	var req strings.Builder
	var want []*version
	for _, vs := range all {
		base, dream, cur := vs[0], vs[1], vs[2]
		if cur.equal(dream) || cur.equal(base) || base.absent || dream.absent || cur.absent ||
			base.size > maxMergeSize || dream.size > maxMergeSize || cur.size > maxMergeSize {
			continue
		}
		for i := range vs {
			req.WriteString(vs[i].id + "\n")
			want = append(want, &vs[i])
		}
	}
	if len(want) == 0 {
		return nil
	}
	out, err := h.git(ctx, []byte(req.String()), "cat-file", "--batch")
	if err != nil {
		return err
	}
	got, err := parseBatch(out, len(want))
	if err != nil {
		return err
	}
	for i, v := range want {
		if got[i].absent {
			return fmt.Errorf("blob %s is missing from the history", v.id)
		}
		v.data = got[i].data
		if v.data == nil {
			v.data = []byte{}
		}
	}
	return nil
}

// parseLsTreeLong reads `git ls-tree -r -l -z` output ("mode type id
// size\tpath\0") into path → version. Entries that are not blobs
// (submodules) are skipped.
func parseLsTreeLong(out []byte) (map[string]version, error) {
	res := map[string]version{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("parse git ls-tree: bad record %.80q", rec)
		}
		if f[1] != "blob" {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("parse git ls-tree: bad size in %.80q", rec)
		}
		res[string(path)] = version{id: f[2], size: size}
	}
	return res, nil
}

// writeResults puts each file in place atomically, in path order, and
// returns the files it removed. Every step goes through an os.Root on the
// memory dir, and before anything is written every path is checked to lie
// under real directories: a directory of the memory dir that became a
// symlink (to elsewhere or within) is never written or deleted through,
// force or not.
func (h *History) writeResults(ctx context.Context, results map[string]version, all map[string][]version) (removed []string, err error) {
	paths := make([]string, 0, len(results))
	for p := range results {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	root, err := os.OpenRoot(h.memDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var bad []string
	for _, p := range paths {
		rel := filepath.FromSlash(p)
		if !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("refusing to write outside the memory dir: %q", p)
		}
		if !fsutil.RealParents(root, rel) {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: %s: a directory on the way is now a symlink or a file; refusing to write through it", ErrConflict, strings.Join(bad, ", "))
	}
	for _, p := range paths {
		v := results[p]
		rel := filepath.FromSlash(p)
		info, err := root.Lstat(rel)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("read %s: %w", p, err)
		}
		if v.absent {
			if exists {
				if err := root.Remove(rel); err != nil {
					return removed, fmt.Errorf("remove %s: %w", p, err)
				}
				removed = append(removed, p)
				if err := fsutil.SyncDirIn(root, filepath.Dir(rel)); err != nil {
					return removed, err
				}
			}
			continue
		}
		perm := os.FileMode(0o644)
		if exists && info.Mode().IsRegular() {
			// The memory file is HEAD's version (the hand edits were
			// recorded first): equal ids mean nothing to write.
			if vs := all[p]; len(vs) == 3 && !vs[2].absent && v.equal(vs[2]) {
				continue
			}
			perm = info.Mode().Perm()
		}
		if v.id == "" {
			if err := fsutil.WriteFileAtomicIn(root, rel, v.data, perm, true); err != nil {
				return removed, err
			}
			continue
		}
		err = fsutil.WriteAtomicInFrom(root, rel, perm, func(w io.Writer) error {
			return h.gitTo(ctx, w, "cat-file", "blob", v.id)
		})
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// removeEmptiedDirs removes the directories that removing the files
// removed left empty, deepest first, when the dream made them: a dream that
// created a/b/c/note.md leaves no a/b/c/ behind once undone. A directory
// is kept when it held a file before the dream (its tree is in the history
// at the dream's parent), when the file system says it was born before the
// dream started (an empty directory the user made, which git cannot see),
// and when it is not empty (os.Root's Remove removes empty directories
// only); a symlink is never followed or removed. It is tidying: a directory
// it cannot remove is left, never an error once the files are restored.
func (h *History) removeEmptiedDirs(ctx context.Context, removed []string, parentSHA string, started time.Time) {
	var dirs []string
	for _, p := range removed {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	out, err := h.gitEnv(ctx, []string{"GIT_LITERAL_PATHSPECS=1"}, nil, append([]string{"ls-tree", "-r", "-d", "-z", "--name-only", "--full-tree", parentSHA, "--"}, dirs...)...)
	if err != nil {
		return
	}
	before := map[string]bool{}
	for _, d := range bytes.Split(out, []byte{0}) {
		before[string(d)] = true
	}
	root, err := os.OpenRoot(h.memDir)
	if err != nil {
		return
	}
	defer root.Close()
	// Deepest first, so that a parent is tried once its children are gone.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range dirs {
		rel := filepath.FromSlash(d)
		info, err := root.Lstat(rel)
		if before[d] || err != nil || !info.IsDir() || fsutil.BornBefore(root, rel, started) {
			continue
		}
		if root.Remove(rel) == nil {
			_ = fsutil.SyncDirIn(root, filepath.Dir(rel))
		}
	}
}
