package audit

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/journal"
)

// Message caps: the body quotes the diff for people reading `git log`; the
// full diff is always available from git itself.
const (
	maxMsgDiffLines = 200
	maxMsgDiffBytes = 16 << 10
)

// RecordHandEdits commits the memory dir if it differs from the last
// recorded state, so that edits a user made by hand are in the history
// before dream changes anything and an undo can never lose them. It returns
// "" when there is nothing to record.
func (h *History) RecordHandEdits(ctx context.Context) (string, error) {
	sha, err := h.record(ctx, Meta{Kind: KindHand, StartedAt: time.Now()}, nil)
	if err != nil {
		return "", fmt.Errorf("audit: record hand edits: %w", err)
	}
	return sha, nil
}

// RecordHandEditsOf records hand edits of just these paths (slash paths
// relative to the memory dir): a user's edit made during a dream to a file
// the dream also changed is recorded as the user's before the merged result
// is recorded as the dream's, so undoing the dream keeps the user's edit.
func (h *History) RecordHandEditsOf(ctx context.Context, paths []string) (string, error) {
	if len(paths) == 0 {
		return "", nil
	}
	sha, err := h.record(ctx, Meta{Kind: KindHand, StartedAt: time.Now(), Paths: paths}, nil)
	if err != nil {
		return "", fmt.Errorf("audit: record hand edits: %w", err)
	}
	return sha, nil
}

// RecordDream commits the current memory dir as the result of a dream. The
// message is built from the real diff. It returns "" and records nothing when
// the memory dir did not change.
func (h *History) RecordDream(ctx context.Context, m Meta) (string, error) {
	if m.DreamID == "" {
		return "", fmt.Errorf("audit: record dream: empty dream id")
	}
	if strings.ContainsAny(m.DreamID, "\n\r") {
		return "", fmt.Errorf("audit: record dream: dream id %q has a line break", m.DreamID)
	}
	if m.Kind == "" {
		m.Kind = KindDream
	}
	sha, err := h.record(ctx, m, nil)
	if err != nil {
		return "", fmt.Errorf("audit: record dream %s: %w", m.DreamID, err)
	}
	return sha, nil
}

// record stages the change (the listed paths, or every path of the memory
// dir git finds changed when m.Paths is nil) and commits it with a message built from the staged diff;
// extra trailers are appended.
func (h *History) record(ctx context.Context, m Meta, extra [][2]string) (string, error) {
	if m.Paths != nil {
		if err := h.stagePaths(ctx, m.Paths); err != nil {
			return "", err
		}
	} else if err := h.stageAll(ctx); err != nil {
		return "", err
	}
	// The statuses and counts, then as much of the patch as the message
	// quotes: the first record of a memory of 30,000 files would otherwise
	// hold the whole memory as a patch.
	out, err := h.git(ctx, nil, "diff", "--cached", "--no-renames", "--no-ext-diff", "-z", "--raw", "--numstat")
	if err != nil {
		return "", err
	}
	files, _, err := parseChange(out)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", nil
	}
	patch, err := h.gitHead(ctx, maxMsgDiffBytes+1, "diff", "--cached", "--no-renames", "--no-ext-diff", "-p")
	if err != nil {
		return "", err
	}
	msg := buildMessage(m, files, patch, extra)
	if _, err := h.git(ctx, []byte(msg), "commit", "-q", "--no-verify", "--cleanup=verbatim", "-F", "-"); err != nil {
		return "", err
	}
	sha, err := h.git(ctx, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	h.maybePack(ctx)
	return strings.TrimSpace(string(sha)), nil
}

// stageAll brings the index up to the memory dir (in scope) at the cost of
// what changed, not of the memory's size: git's own stat check of the
// index (`diff-files`, which reads no file whose stat is unchanged) finds
// the changed and deleted files, `ls-files --others` the new ones, and
// only those paths are hashed into the index (`update-index`). `add -A`
// would do the same walk but hash every file whose stat merely looks
// different, and it takes the whole dir as its argument.
//
// dream's own files and any nested git repository are left out. A
// directory holding a .git (a clone, a submodule, nanobot's workspace
// layout with a repo inside) would otherwise be recorded as a gitlink (mode
// 160000): it holds none of the repository's content, so it is no record
// of memory, and a synced copy refuses to pull it, which fails every dream
// on the other machine. Its files are not memory dream writes either, and
// recording them would also push them to the sync remote. A gitlink an
// older history recorded is dropped from the index, so the next record
// removes it; so is a file outside the history's scope (see SetScope).
func (h *History) stageAll(ctx context.Context) error {
	spec := h.pathspec()
	for _, dir := range nestedRepos(h.memDir) {
		spec = append(spec, ":(exclude,top,literal)"+dir)
	}
	changed, err := h.git(ctx, nil, append([]string{"diff-files", "--name-status", "--no-renames", "-z", "--"}, spec...)...)
	if err != nil {
		return err
	}
	// No --exclude-standard: a .gitignore in the memory dir must not keep
	// a memory out of the history; dream's own names are skipped in
	// stagePaths, and a nested repository (listed as "dir/") here.
	untracked, err := h.git(ctx, nil, append([]string{"ls-files", "--others", "-z", "--"}, spec...)...)
	if err != nil {
		return err
	}
	// git calls deleted what is gone or now lies beyond a symlink; those
	// entries are removed without looking at the path (update-index
	// refuses a path through a symlink).
	var paths, gone []string
	recs := bytes.Split(changed, []byte{0})
	for i := 0; i+1 < len(recs); i += 2 {
		if string(recs[i]) == "D" {
			gone = append(gone, string(recs[i+1]))
		} else {
			paths = append(paths, string(recs[i+1]))
		}
	}
	for _, p := range bytes.Split(untracked, []byte{0}) {
		if len(p) > 0 && p[len(p)-1] != '/' {
			paths = append(paths, string(p))
		}
	}
	if len(gone) > 0 {
		if _, err := h.git(ctx, nulList(gone), "update-index", "--force-remove", "-z", "--stdin"); err != nil {
			return err
		}
	}
	if err := h.stagePaths(ctx, paths); err != nil {
		return err
	}
	return h.dropUnrecorded(ctx)
}

// nestedRepos lists, slash-separated and relative to memDir, every
// directory below memDir that holds a .git entry (a directory or a
// gitdir file); it does not descend into them. Unreadable directories are
// left to git, which reports them.
func nestedRepos(memDir string) []string {
	var out []string
	_ = filepath.WalkDir(memDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		if p == memDir {
			return nil
		}
		if e.Name() == ".git" {
			return filepath.SkipDir
		}
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			rel, rerr := filepath.Rel(memDir, p)
			if rerr == nil {
				out = append(out, filepath.ToSlash(rel))
			}
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// dropUnrecorded removes from the index every gitlink and every file out
// of the history's scope.
func (h *History) dropUnrecorded(ctx context.Context) error {
	out, err := h.git(ctx, nil, "ls-files", "--stage", "-z")
	if err != nil {
		return err
	}
	var list bytes.Buffer
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<mode> <sha> <stage>\t<path>"
		tab := bytes.IndexByte(rec, '\t')
		if tab <= 0 {
			continue
		}
		if bytes.HasPrefix(rec, []byte("160000 ")) || !h.inScope(string(rec[tab+1:])) {
			list.Write(rec[tab+1:])
			list.WriteByte(0)
		}
	}
	if list.Len() == 0 {
		return nil
	}
	_, err = h.git(ctx, list.Bytes(), "update-index", "--force-remove", "-z", "--stdin")
	return err
}

// stagePaths updates the index entries of just these paths from the memory
// dir: added or changed files are hashed, missing ones removed. dream's own
// files and files out of the history's scope are never staged.
func (h *History) stagePaths(ctx context.Context, paths []string) error {
	var list bytes.Buffer
	for _, p := range paths {
		if p == "" || journal.Ignored(path.Base(p)) || strings.HasPrefix(p, journal.TempPrefix) || strings.Contains(p, "/"+journal.TempPrefix) || !h.inScope(p) {
			continue
		}
		list.WriteString(p)
		list.WriteByte(0)
	}
	if list.Len() == 0 {
		return nil
	}
	_, err := h.git(ctx, list.Bytes(), "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
	return err
}

// nulList is paths as update-index --stdin -z reads them.
func nulList(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// packEvery is roughly how many loose objects the history may hold before it
// is packed: a repository of a thousand dreams stays a few files, not tens
// of thousands.
const packEvery = 256

// detachPackAt is the estimated loose-object count from which packing runs
// in the background (git's own gc.autoDetach) instead of inside the dream:
// the first record of a memory of 30,000 files leaves 30,000 loose objects,
// and packing them costs as much as recording them.
const detachPackAt = 16 * 256

// maybePack packs the history when it holds about packEvery loose objects,
// estimated as git itself does, from one of the 256 object directories.
// Failure only costs disk space, so it is not an error.
func (h *History) maybePack(ctx context.Context) {
	des, err := os.ReadDir(filepath.Join(h.gitDir, "objects", "17"))
	if err != nil || len(des)*256 < packEvery {
		return
	}
	detach := strconv.FormatBool(len(des)*256 >= detachPackAt)
	_, _ = h.git(ctx, nil, "-c", "gc.auto="+strconv.Itoa(packEvery), "-c", "gc.autoDetach="+detach, "gc", "--auto", "--quiet")
}

// buildMessage writes the subject, the per-file counts, the capped diff and
// the trailers.
func buildMessage(m Meta, files []FileStat, patch string, extra [][2]string) string {
	added, removed := 0, 0
	for _, f := range files {
		added += f.Added
		removed += f.Removed
	}
	noun := "files"
	if len(files) == 1 {
		noun = "file"
	}
	var sb strings.Builder
	switch m.Kind {
	case KindHand:
		fmt.Fprintf(&sb, "hand edits: %d %s (+%d −%d)\n\n", len(files), noun, added, removed)
	default:
		fmt.Fprintf(&sb, "%s %s: %d %s (+%d −%d)\n\n", m.Kind, m.DreamID, len(files), noun, added, removed)
	}
	for _, f := range files {
		fmt.Fprintf(&sb, "%-8s %s +%d −%d\n", f.Status, f.Path, f.Added, f.Removed)
	}
	sb.WriteString("\n")
	sb.WriteString(capDiff(patch))
	sb.WriteString("\n")
	started := m.StartedAt
	if started.IsZero() {
		started = time.Now()
	}
	trailers := [][2]string{{"Dream-Kind", m.Kind}}
	if m.DreamID != "" {
		trailers = append(trailers, [2]string{"Dream-Id", m.DreamID})
	}
	for _, kv := range [][2]string{{"Dream-Status", m.Status}, {"Dream-Provider", m.Provider}, {"Dream-Model", m.Model}} {
		if kv[1] != "" {
			trailers = append(trailers, kv)
		}
	}
	trailers = append(trailers, [2]string{"Dream-Started-At", started.UTC().Format(time.RFC3339)})
	trailers = append(trailers, extra...)
	for _, kv := range trailers {
		fmt.Fprintf(&sb, "%s: %s\n", kv[0], oneLine(kv[1]))
	}
	return sb.String()
}

// capDiff keeps at most maxMsgDiffLines lines and maxMsgDiffBytes bytes of
// the diff, ending on a whole line, and says so when it cut.
func capDiff(patch string) string {
	patch = strings.TrimRight(patch, "\n")
	if patch == "" {
		return ""
	}
	lines := strings.SplitAfter(patch, "\n")
	var sb strings.Builder
	for i, l := range lines {
		if i >= maxMsgDiffLines || sb.Len()+len(l) > maxMsgDiffBytes {
			sb.WriteString("… diff truncated\n")
			return sb.String()
		}
		sb.WriteString(l)
	}
	sb.WriteString("\n")
	return sb.String()
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
