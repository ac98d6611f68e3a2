package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
// dir git finds changed when m.Paths is nil) and commits it with a message
// built from the staged diff; extra trailers are appended.
func (h *History) record(ctx context.Context, m Meta, extra [][2]string) (string, error) {
	var staged int
	var err error
	if m.Paths != nil {
		staged, err = h.stagePaths(ctx, m.Paths)
	} else {
		staged, err = h.stageAll(ctx)
	}
	if err != nil {
		return "", err
	}
	if staged == 0 && h.indexIsHead() {
		return "", nil // see recorded.go
	}
	parent, err := h.head(ctx)
	if err != nil {
		return "", err
	}
	sha, subject, err := h.commitChange(ctx, m, extra, parent, staged)
	if err != nil {
		return "", err
	}
	if sha == "" {
		if parent != "" {
			h.noteRecorded(parent)
		}
		return "", nil
	}
	if err := h.moveHead(ctx, parent, sha, subject); err != nil {
		return "", err
	}
	h.noteRecorded(sha)
	h.gcAuto(ctx)
	return sha, nil
}

// gcAuto is `git gc --auto` after a commit, as `git commit` runs it: git
// packs the loose objects once there are enough of them (gc.auto) and
// rolls packs up once there are too many (gc.autoPackLimit), with its own
// defaults. It runs in the foreground (gc.autoDetach is off, see git.go),
// so that nothing of a record is left running once it returns. Failing
// only costs disk space, so it is not an error.
func (h *History) gcAuto(ctx context.Context) {
	_, _ = h.git(ctx, nil, "gc", "--auto", "--quiet")
}

// commitChange writes the index's tree and, when it differs from parent,
// a commit of it with a message built from the diff (its id and subject;
// "" when nothing changed). The tree first: the change is then a diff of
// two trees, which skips every directory whose tree id did not change,
// where a diff of the index against HEAD reads both in full.
func (h *History) commitChange(ctx context.Context, m Meta, extra [][2]string, parent string, staged int) (sha, subject string, err error) {
	out, err := h.git(ctx, nil, "write-tree")
	if err != nil {
		return "", "", err
	}
	tree := strings.TrimSpace(string(out))
	base := emptyTree(len(tree))
	if parent != "" {
		base = parent
	}
	files, more, patch, err := h.changeOf(ctx, base, tree, staged)
	if err != nil || len(files) == 0 {
		return "", "", err
	}
	msg := buildMessage(m, files, more, patch, extra)
	subject, _, _ = strings.Cut(msg, "\n")
	sha, err = h.writeCommit(ctx, parent, tree, msg)
	return sha, subject, err
}

// emptyTree is git's id of the empty tree in a repository whose ids have
// idLen hex digits (SHA-1 or SHA-256): the "before" of a first record.
func emptyTree(idLen int) string {
	if idLen == 64 {
		return "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	}
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
}

// maxMsgFiles is how many files the message lists with their counts. Past
// it the message lists the first ones and says how many more there are:
// counting a file's lines means reading and diffing both its versions, and
// over the 22,000 files of a first offline dream of a large memory that was
// an eighth of the record, for a list the commit itself holds in full.
// The entry's files and counts (`dream log`, `show`) come from the commit
// itself, which holds every change, so they are whole whatever the message
// lists.
const maxMsgFiles = 200

// changeOf lists what changed from base (a commit or tree) to tree,
// sorted, with line counts, and as much of the patch as the message quotes
// (the first record of a memory of 30,000 files would otherwise hold the
// whole memory as a patch). staged is how many index entries the staging
// touched (an upper bound on the files changed): up to maxMsgFiles, one git
// process lists statuses, counts and the patch together; past it the
// statuses of all are listed (no content is read for them) and only the
// first maxMsgFiles are counted and quoted, the others returned as more.
// The quoted patch is the same either way: each file's patch is at least
// three lines, so the first maxMsgFiles files' patches fill the message's
// maxMsgDiffLines before any later file's would be quoted.
func (h *History) changeOf(ctx context.Context, base, tree string, staged int) ([]FileStat, int, string, error) {
	diff := []string{"diff-tree", "-r", "--no-renames", "--no-ext-diff", "-z", "--raw"}
	full := []string{"--numstat", "-p", base, tree}
	if staged <= maxMsgFiles {
		out, err := h.gitChange(ctx, nil, maxMsgDiffBytes+1, append(diff, full...)...)
		if err != nil {
			return nil, 0, "", err
		}
		files, patch, err := parseChange(out)
		return files, 0, patch, err
	}
	// --no-abbrev: the ids are not read, and abbreviating each one looks
	// it up in every pack.
	out, err := h.git(ctx, nil, append(slices.Clip(diff), "--no-abbrev", base, tree)...)
	if err != nil {
		return nil, 0, "", err
	}
	all, _, err := parseChange(out)
	if err != nil || len(all) == 0 {
		return nil, 0, "", err
	}
	head := all[:min(len(all), maxMsgFiles)]
	args := append(append(slices.Clip(diff), full...), "--")
	for _, f := range head {
		args = append(args, f.Path)
	}
	out, err = h.gitChange(ctx, []string{"GIT_LITERAL_PATHSPECS=1"}, maxMsgDiffBytes+1, args...)
	if err != nil {
		return nil, 0, "", err
	}
	counted, patch, err := parseChange(out)
	if err != nil {
		return nil, 0, "", err
	}
	if len(counted) != len(head) {
		return nil, 0, "", fmt.Errorf("git diff-tree --numstat: %d of %d files counted", len(counted), len(head))
	}
	return counted, len(all) - len(head), patch, nil
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
func (h *History) stageAll(ctx context.Context) (int, error) {
	// The three looks at the memory dir are independent, so they run at
	// once: the walk for nested repositories, git's stat check and git's
	// listing. What lies in a nested repository is dropped from what git
	// reports rather than excluded by pathspec, which would make the stat
	// check wait for the walk.
	spec := h.pathspec()
	var (
		nested           []string
		untracked, drop  []string
		listErr, diffErr error
		changed          []byte
		wg               sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		nested = nestedRepos(h.memDir)
	}()
	go func() {
		defer wg.Done()
		untracked, drop, listErr = h.listUnrecorded(ctx, spec)
	}()
	changed, diffErr = h.diffFiles(ctx, spec)
	wg.Wait()
	if err := errors.Join(diffErr, listErr); err != nil {
		return 0, err
	}
	inNested := newDirSet(nested)
	untracked = slices.DeleteFunc(untracked, inNested.holds)
	if bytes.Count(changed, []byte("\x00M\x00")) >= refreshAt {
		// diff-files compares stat data only; a file whose stat changed
		// and whose bytes did not would be compressed into a pack (see
		// updateIndex) only to be dropped as already recorded. update-index
		// --refresh hashes such files without compressing anything and
		// puts their new stat in the index, so only real changes are left.
		if _, err := h.git(ctx, nil, "update-index", "-q", "--refresh"); err != nil {
			return 0, err
		}
		var err error
		if changed, err = h.diffFiles(ctx, spec); err != nil {
			return 0, err
		}
	}
	// git calls deleted what is gone or now lies beyond a symlink; those
	// entries are removed without looking at the path (update-index
	// refuses a path through a symlink).
	var paths, gone []string
	recs := bytes.Split(changed, []byte{0})
	for i := 0; i+1 < len(recs); i += 2 {
		switch p := string(recs[i+1]); {
		case inNested.holds(p):
		case string(recs[i]) == "D":
			gone = append(gone, p)
		default:
			paths = append(paths, p)
		}
	}
	paths = append(paths, untracked...)
	if len(gone) > 0 {
		if _, err := h.git(ctx, nulList(gone), "update-index", "--force-remove", "-z", "--stdin"); err != nil {
			return 0, err
		}
	}
	n, err := h.stagePaths(ctx, paths)
	if err != nil {
		return 0, err
	}
	if drop == nil {
		dropped, err := h.dropUnrecorded(ctx)
		return len(gone) + n + dropped, err
	}
	if len(drop) > 0 {
		if _, err := h.git(ctx, nulList(drop), "update-index", "--force-remove", "-z", "--stdin"); err != nil {
			return 0, err
		}
	}
	return len(gone) + n + len(drop), nil
}

// diffFiles is git's stat check of the index against the memory dir (in
// scope per spec): "<status>\0<path>\0" records.
func (h *History) diffFiles(ctx context.Context, spec []string) ([]byte, error) {
	return h.git(ctx, nil, append([]string{"diff-files", "--name-status", "--no-renames", "-z", "--"}, spec...)...)
}

// listUnrecorded lists the files of the memory dir the index does not
// hold yet (untracked, in scope per spec) and, when it can from the same
// git process, the index entries the history must not hold (drop, not nil
// then; see dropUnrecorded). No --exclude-standard: a .gitignore in the
// memory dir must not keep a memory out of the history; dream's own names
// are skipped in stagePaths, a nested repository (listed as "dir/") here,
// and the files git lists inside one it holds entries under (an older
// history's) by the caller.
//
// A history without a scope lists both with one `ls-files --others
// --stage` of the whole dir, which costs less than the two listings it
// replaces (the exclude pathspecs cost more than matching their few names
// here). A scoped history lists what is untracked inside its scope only
// (a workspace's other folders can hold far more than its memory) and its
// index entries afterwards.
func (h *History) listUnrecorded(ctx context.Context, spec []string) (untracked, drop []string, err error) {
	if len(h.scope) > 0 {
		out, err := h.git(ctx, nil, append([]string{"ls-files", "--others", "-z", "--"}, spec...)...)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 && p[len(p)-1] != '/' {
				untracked = append(untracked, string(p))
			}
		}
		return untracked, nil, nil
	}
	out, err := h.git(ctx, nil, "ls-files", "-z", "-t", "--stage", "--others")
	if err != nil {
		return nil, nil, err
	}
	untracked, drop = h.parseListing(out)
	return untracked, drop, nil
}

// parseListing reads `git ls-files -z -t --stage --others`: "? <path>" for
// an untracked file ("<dir>/" for a nested repository, skipped), "<tag>
// <mode> <id> <stage>\t<path>" for an index entry. drop is never nil.
func (h *History) parseListing(out []byte) (untracked, drop []string) {
	drop = []string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) < 3 || rec[1] != ' ' {
			continue
		}
		if rec[0] != '?' { // "H <mode> <id> <stage>\t<path>": an index entry
			if p, ok := h.unrecorded(rec[2:]); ok {
				drop = append(drop, p)
			}
			continue
		}
		if p := string(rec[2:]); p[len(p)-1] != '/' {
			untracked = append(untracked, p)
		}
	}
	return untracked, drop
}

// dirSet is a set of slash paths of directories.
type dirSet map[string]bool

func newDirSet(dirs []string) dirSet {
	s := make(dirSet, len(dirs))
	for _, d := range dirs {
		s[d] = true
	}
	return s
}

// holds reports whether slash path p is one of the set's directories or
// lies inside one, at the cost of p's depth, not of the set's size.
func (s dirSet) holds(p string) bool {
	if len(s) == 0 {
		return false
	}
	for i := range len(p) {
		if p[i] == '/' && s[p[:i]] {
			return true
		}
	}
	return s[p]
}

// refreshAt is how many files diff-files finds modified from which
// stageAll first has git tell which of them really changed: a dream's
// linked staging changes every memory file's ctime (a link is counted in
// the inode), as does a memory copied with its mtimes (cp -a, rsync -t) or
// restored from a backup, and compressing thousands of unchanged files to
// find that out costs seconds; hashing them a fraction of that.
const refreshAt = 200

// nestedRepos lists, slash-separated, relative to memDir and sorted, every
// directory below memDir that holds a .git entry (a directory or a gitdir
// file); it does not descend into them. Unreadable directories are left to
// git, which reports them. Each directory is read once, unsorted, and its
// listing says whether it holds a .git: at 30,000 files a sorted walk with
// an lstat of every directory's .git was about as long as a git process.
func nestedRepos(memDir string) []string {
	var out []string
	var walk func(rel string)
	walk = func(rel string) {
		f, err := os.Open(filepath.Join(memDir, rel))
		if err != nil {
			return
		}
		entries, _ := f.ReadDir(-1)
		f.Close()
		var dirs []string
		for _, e := range entries {
			switch {
			case e.Name() == ".git" && rel != "":
				out = append(out, filepath.ToSlash(rel))
				return
			case e.Name() == ".git":
				// the memory dir's own repository: not memory, not
				// descended into
			case e.IsDir():
				dirs = append(dirs, e.Name())
			}
		}
		for _, d := range dirs {
			walk(filepath.Join(rel, d))
		}
	}
	walk("")
	slices.Sort(out)
	return out
}

// dropUnrecorded removes from the index every gitlink and every file out
// of the history's scope, and returns how many it removed.
func (h *History) dropUnrecorded(ctx context.Context) (int, error) {
	out, err := h.git(ctx, nil, "ls-files", "--stage", "-z")
	if err != nil {
		return 0, err
	}
	var list bytes.Buffer
	n := 0
	for _, rec := range bytes.Split(out, []byte{0}) {
		if p, ok := h.unrecorded(rec); ok {
			list.WriteString(p)
			list.WriteByte(0)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	_, err = h.git(ctx, list.Bytes(), "update-index", "--force-remove", "-z", "--stdin")
	return n, err
}

// unrecorded reads one `ls-files --stage` entry, "<mode> <id> <stage>\t<path>",
// and returns its path if the history must not hold it: a gitlink, or a
// file out of scope.
func (h *History) unrecorded(rec []byte) (string, bool) {
	tab := bytes.IndexByte(rec, '\t')
	if tab <= 0 {
		return "", false
	}
	p := string(rec[tab+1:])
	return p, bytes.HasPrefix(rec, []byte("160000 ")) || !h.inScope(p)
}

// stagePaths updates the index entries of just these paths from the memory
// dir: added or changed files are hashed, missing ones removed. dream's own
// files and files out of the history's scope are never staged. It returns
// how many paths it staged.
func (h *History) stagePaths(ctx context.Context, paths []string) (int, error) {
	var list bytes.Buffer
	n := 0
	for _, p := range paths {
		if p == "" || journal.Ignored(path.Base(p)) || strings.HasPrefix(p, journal.TempPrefix) || strings.Contains(p, "/"+journal.TempPrefix) || !h.inScope(p) {
			continue
		}
		list.WriteString(p)
		list.WriteByte(0)
		n++
	}
	if n == 0 {
		return 0, nil
	}
	return n, h.updateIndex(ctx, list.Bytes())
}

// updateIndex stages a NUL-separated path list into the index, as `git
// add` does: each added or changed file is hashed, and a path that is gone
// is removed. One update-index, which replaces the index only once it has
// staged everything: a record stopped halfway leaves the index as it was.
//
// Its blobs are streamed into one pack (git's bulk-checkin, which git
// uses for files past core.bigFileThreshold, lowered to 1 byte here only)
// rather than written as a loose object each: the first record of a
// memory of thousands of files would otherwise create as many files in
// the history, each an inode and a directory entry (3,000 topics: most of
// a first dream's time), and git gc --auto would then pack them again.
// Files of 0 and 1 bytes and symlinks stay loose; a blob the history
// already holds is not stored again.
//
// GLIBC_TUNABLES keeps glibc's malloc from handing its heap back to the
// kernel after every file: zlib allocates a quarter of a megabyte per
// object and frees it, glibc trims the top of the heap past 128 KiB, and
// each object then faults fresh zeroed pages in again (measured over
// 30,000 files: 2.1 s of system time down to 0.5 s). It means nothing to
// any other C library, and one the user set is left as it is.
func (h *History) updateIndex(ctx context.Context, list []byte) error {
	var env []string
	if _, ok := os.LookupEnv("GLIBC_TUNABLES"); !ok {
		env = []string{"GLIBC_TUNABLES=glibc.malloc.trim_threshold=67108864:glibc.malloc.top_pad=4194304"}
	}
	_, err := h.gitEnv(ctx, env, list, "-c", "core.bigFileThreshold=1", "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
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

// buildMessage writes the subject, the per-file counts, the capped diff and
// the trailers. more is how many files changed beyond the listed ones when
// the list was capped (see maxMsgFiles); the subject then counts files, not
// lines.
func buildMessage(m Meta, files []FileStat, more int, patch string, extra [][2]string) string {
	added, removed := 0, 0
	for _, f := range files {
		added += f.Added
		removed += f.Removed
	}
	total := len(files) + more
	noun := "files"
	if total == 1 {
		noun = "file"
	}
	counts := fmt.Sprintf(" (+%d −%d)", added, removed)
	if more > 0 {
		counts = ""
	}
	var sb strings.Builder
	switch m.Kind {
	case KindHand:
		fmt.Fprintf(&sb, "hand edits: %d %s%s\n\n", total, noun, counts)
	default:
		fmt.Fprintf(&sb, "%s %s: %d %s%s\n\n", m.Kind, m.DreamID, total, noun, counts)
	}
	for _, f := range files {
		fmt.Fprintf(&sb, "%-8s %s +%d −%d\n", f.Status, f.Path, f.Added, f.Removed)
	}
	if more > 0 {
		fmt.Fprintf(&sb, "… and %d more files (the commit holds every change)\n", more)
	}
	if len(m.Units) > 0 {
		sb.WriteString("\n" + unitsHeading)
		for _, u := range m.Units {
			var c bytes.Buffer
			if json.Compact(&c, u) == nil && c.Len() > 0 {
				sb.Write(c.Bytes())
				sb.WriteByte('\n')
			}
		}
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
