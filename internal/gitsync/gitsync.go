// Package gitsync moves a memory's audit history between machines through a
// git remote (any URL git can push to: a bare repository path, ssh, https).
//
// The audit repository (internal/audit) already records every dream, undo
// and hand edit as a commit whose work tree is the memory dir, so sharing
// memory is sharing that branch: Pull fetches the memory's branch on the
// remote and merges it into the memory, Push sends the local main back to
// that branch. One remote carries many memories, one branch each, named
// after the memory's identity (see New). Callers hold the consolidation lock around both, so on the remote the history is a line of
// whole dreams: with the etcd lock, each holder pulls first and pushes before
// it releases, and a push that is not a fast-forward is refused by git
// itself, a second fence behind etcd's.
//
// Pull never half-applies. The merge is computed without touching the
// memory dir (git merge-tree --write-tree); a conflict stops it with the
// files named and nothing changed; a clean result lands through the journal
// (internal/journal), every file replaced by rename, and a crash mid-way is
// rolled forward by the next process, as for a dream. The remote is
// untrusted: only regular files with clean relative paths are accepted.
package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
)

// The refs gitsync keeps in the audit repository, per remote branch B.
const (
	// syncedPrefix+B is the remote's head this machine last synced with
	// (merged in or pushed): a remote that no longer contains it was
	// rewritten. (The oldest of these refs: its name is kept so that a
	// machine upgraded in place keeps its record.)
	syncedPrefix = "refs/dream-sync/"
	// fetchedPrefix+B is the remote's branch as last fetched.
	fetchedPrefix = "refs/dream/fetched/"
	// conflictPrefix+B is the remote's head a conflict was last reported
	// against: a hand resolution is accepted against that version only.
	conflictPrefix = "refs/dream/conflict/"
	// BackupPrefix+time keeps this machine's history from before it
	// adopted a rewritten remote's.
	BackupPrefix = "refs/dream/backup/"
)

// emptyTree is git's (SHA-1) empty tree, the "before" of a first pull.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// What the next sync will do (dream.SyncState.Next).
const (
	NextNothing     = "nothing"
	NextPush        = "push"
	NextFastForward = "fast-forward"
	NextMerge       = "merge"
	NextConflict    = "conflict"
	NextRefused     = "refused"
)

var (
	// ErrConflict: the remote and this machine changed the same lines; the
	// memory is unchanged. The error is a *ConflictError.
	ErrConflict = errors.New("the remote's memory conflicts with this machine's")
	// ErrRejected: the remote has commits this machine has not merged (a
	// push that is not a fast-forward); pull first.
	ErrRejected = errors.New("the remote refused the push (it has commits not merged here)")
	// ErrUnsafe: the remote holds something that cannot be memory (a
	// symlink, a submodule, a path escaping the memory dir).
	ErrUnsafe = errors.New("the remote holds an entry dream will not write into memory")
	// ErrUnreachable: the remote could not be fetched from (down, cut off,
	// refused): this machine's memory is as it was and can go on alone. It
	// matches dream.ErrUnreachable.
	ErrUnreachable error = unreachable{}
	// ErrRewritten: the remote no longer contains the commit this machine
	// last synced with (its history was rewritten and force-pushed, or the
	// branch deleted). Nothing is merged or pushed over it until the user
	// adopts the remote's history (AdoptRemote).
	ErrRewritten = errors.New("the remote's history was rewritten")
)

// unreachable is ErrUnreachable: its own words, and the mark every backend
// whose server did not answer carries.
type unreachable struct{}

func (unreachable) Error() string        { return "the remote could not be reached" }
func (unreachable) Is(target error) bool { return target == lock.ErrUnreachable }

// ErrBranch marks a remote branch name git would refuse or read as an
// option.
var ErrBranch = errors.New("gitsync: invalid remote branch name")

// Repo is one memory's history and its remote branch.
type Repo struct {
	hist     *audit.History
	memKey   string
	remote   string
	branch   string
	stateDir string
	fence    func(context.Context) error
}

// SetFence makes Pull call fence immediately before it lands the remote's
// files, and land nothing when fence fails: the caller's proof that it
// still holds the consolidation lock (a fetch may take long enough for an
// etcd lease to expire).
func (r *Repo) SetFence(fence func(context.Context) error) { r.fence = fence }

// New ties hist to branch on remote; stateDir is dream's state dir, for the
// journal. One remote holds many memories, one branch each: the branch is
// the memory's identity (the same on every machine sharing it), never a
// fixed name, or every project's memory would be merged into every other's.
func New(hist *audit.History, remote, branch, stateDir string) (*Repo, error) {
	if err := CheckBranch(branch); err != nil {
		return nil, err
	}
	key, err := journal.MemKey(hist.MemoryDir())
	if err != nil {
		return nil, fmt.Errorf("gitsync: %w", err)
	}
	return &Repo{hist: hist, memKey: key, remote: remote, branch: branch, stateDir: stateDir}, nil
}

// CheckBranch refuses a branch name git's check-ref-format would refuse, and
// one starting with '-' (an option to git). The name comes from settings.
func CheckBranch(b string) error {
	bad := b == "" || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".lock") || strings.HasSuffix(b, ".") || strings.Contains(b, "..") ||
		strings.Contains(b, "//") || strings.Contains(b, "@{") || b == "@" ||
		strings.ContainsAny(b, " ~^:?*[\\\x7f")
	for _, c := range b {
		if c < 0x20 {
			bad = true
		}
	}
	for _, part := range strings.Split(b, "/") {
		if strings.HasPrefix(part, ".") {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("%w: %q", ErrBranch, b)
	}
	return nil
}

// Branch is the remote branch this memory's history travels on.
func (r *Repo) Branch() string { return r.branch }

func (r *Repo) syncedRef() string   { return syncedPrefix + r.branch }
func (r *Repo) fetchedRef() string  { return fetchedPrefix + r.branch }
func (r *Repo) conflictRef() string { return conflictPrefix + r.branch }

// Remote is the URL as configured.
func (r *Repo) Remote() string { return r.remote }

func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	out, err := r.hist.Git(ctx, nil, args...)
	return strings.TrimSpace(string(out)), err
}

// rev resolves a revision to a commit id, "" when it does not exist.
func (r *Repo) rev(ctx context.Context, name string) (string, error) {
	out, err := r.git(ctx, "rev-parse", "--verify", "-q", name+"^{commit}")
	if err != nil {
		if audit.GitExitCode(err) > 0 {
			return "", nil
		}
		return "", err
	}
	return out, nil
}

// setRef points ref at sha, or deletes it when sha is "".
func (r *Repo) setRef(ctx context.Context, ref, sha string) error {
	args := []string{"update-ref", ref, sha}
	if sha == "" {
		args = []string{"update-ref", "-d", ref}
	}
	if _, err := r.git(ctx, args...); err != nil {
		return fmt.Errorf("gitsync: recording %s: %w", ref, err)
	}
	return nil
}

// Fetch brings the remote's branch into the fetched ref (or drops the ref
// when the remote has no such branch). Only this memory's branch is
// fetched: the other memories on the remote are none of this one's
// business. A remote that cannot be asked is ErrUnreachable.
func (r *Repo) Fetch(ctx context.Context) error {
	if _, err := r.git(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", r.remote, "+refs/heads/"+r.branch+":"+r.fetchedRef()); err != nil {
		// A remote without the branch: ls-remote tells an absent branch
		// (reachable, empty answer) from an unreachable remote.
		out, lerr := r.git(ctx, "ls-remote", "--heads", "--", r.remote, "refs/heads/"+r.branch)
		if lerr != nil || out != "" {
			return fmt.Errorf("%w: fetching %s: %s", ErrUnreachable, r.remote, flat(err.Error()))
		}
		return r.setRef(ctx, r.fetchedRef(), "")
	}
	return nil
}

// Status fetches and compares, and says what the next sync will do. It
// works on what that sync would work on: the edits not yet recorded are
// committed first (a commit no ref names, the history unchanged), and the
// merge that sync would run is run (git merge-tree, in the object store
// only), so "merge" and "conflict" are git's answer, not a guess. An
// unreachable remote is a state, not an error, so `dream status` can show
// it, with the counts as of the last fetch.
func (r *Repo) Status(ctx context.Context) dream.SyncState {
	st := dream.SyncState{Remote: r.remote, Branch: r.branch}
	ferr := r.Fetch(ctx)
	ours, err := r.pending(ctx, &st)
	if err == nil {
		err = r.compare(ctx, &st, ours)
	}
	if err != nil {
		st.State, st.Next, st.Error = "unknown", "", err.Error()
		return st
	}
	if ferr != nil {
		st.State, st.Next, st.Error = "unreachable", "", ferr.Error()
		return st
	}
	if st.Next == NextMerge {
		_, conflicts, err := r.mergeTree(ctx, ours)
		switch {
		case err != nil:
			st.Next, st.Error = "", err.Error()
		case len(conflicts) > 0:
			st.Next, st.Conflicts = NextConflict, conflicts
		}
	}
	return st
}

// pending returns what the next sync starts from: HEAD, or when the
// memory has edits not yet recorded, a commit of them on top of HEAD that
// no ref names (st.HandEdits lists their files).
func (r *Repo) pending(ctx context.Context, st *dream.SyncState) (string, error) {
	tree, err := r.hist.Pending(ctx)
	if err != nil {
		return "", err
	}
	head, err := r.rev(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	before := emptyTree
	args := []string{"commit-tree", tree, "-m", "edits not yet recorded"}
	if head != "" {
		before = head + "^{tree}"
		args = append(args, "-p", head)
	}
	names, err := r.git(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-renames", before, tree)
	if err != nil || names == "" {
		return "HEAD", err
	}
	st.HandEdits = strings.Split(strings.TrimRight(names, "\x00"), "\x00")
	return r.git(ctx, args...)
}

// compare fills st from ours (HEAD, or Status's commit of the edits not
// yet recorded), the fetched ref and the synced ref.
func (r *Repo) compare(ctx context.Context, st *dream.SyncState, ours string) error {
	local, err := r.rev(ctx, ours)
	if err != nil {
		return err
	}
	theirs, err := r.rev(ctx, r.fetchedRef())
	if err != nil {
		return err
	}
	synced, err := r.rev(ctx, r.syncedRef())
	if err != nil {
		return err
	}
	st.Local, st.Theirs = local, theirs
	if synced != "" {
		kept, err := r.contains(ctx, theirs, synced)
		if err != nil {
			return err
		}
		if !kept {
			st.State, st.Next = "rewritten", NextRefused
			return nil
		}
	}
	count := func(rev string) (int, error) {
		n, err := r.git(ctx, "rev-list", "--count", rev)
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(n)
	}
	switch {
	case theirs == "" && local == "":
		st.State, st.Next = "in sync", NextNothing
		return nil
	case theirs == "":
		st.State, st.Next = "remote empty", NextPush
		st.Ahead, err = count(local)
		return err
	case local == "":
		st.State, st.Next = "nothing local", NextFastForward
		st.Behind, err = count(theirs)
		return err
	}
	out, err := r.git(ctx, "rev-list", "--left-right", "--count", local+"..."+theirs)
	if err != nil {
		return err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return fmt.Errorf("gitsync: unexpected rev-list output %q", out)
	}
	st.Ahead, _ = strconv.Atoi(f[0])
	st.Behind, _ = strconv.Atoi(f[1])
	switch {
	case st.Ahead == 0 && st.Behind == 0:
		st.State, st.Next = "in sync", NextNothing
	case st.Behind == 0:
		st.State, st.Next = "ahead", NextPush
	case st.Ahead == 0:
		st.State, st.Next = "behind", NextFastForward
	default:
		st.State, st.Next = "diverged", NextMerge
	}
	return nil
}

// contains says whether commit is in head's history ("" head: no).
func (r *Repo) contains(ctx context.Context, head, commit string) (bool, error) {
	if head == "" {
		return false, nil
	}
	_, err := r.git(ctx, "merge-base", "--is-ancestor", commit, head)
	if err == nil {
		return true, nil
	}
	if audit.GitExitCode(err) == 1 {
		return false, nil
	}
	return false, fmt.Errorf("gitsync: is %s in the remote's history: %w", shortID(commit), err)
}

// Pull fetches and merges the remote's branch into the memory dir. The
// caller holds the consolidation lock and has recorded hand edits (so the
// memory dir equals HEAD). On an error nothing changed.
//
// resolved accepts a hand resolution: a file the merge conflicts on is
// taken as it is here (the user edited it to the text to keep after the
// conflict was reported), provided the remote's version of it is still the
// one reported; otherwise the conflict is reported again.
func (r *Repo) Pull(ctx context.Context, resolved bool) (dream.SyncPull, error) {
	res := dream.SyncPull{Kind: "up to date", Files: []dream.Change{}}
	if err := r.Fetch(ctx); err != nil {
		return res, err
	}
	var st dream.SyncState
	if err := r.compare(ctx, &st, "HEAD"); err != nil {
		return res, fmt.Errorf("gitsync: %w", err)
	}
	res.Head = st.Local
	if st.State == "rewritten" {
		return res, r.rewrittenError(ctx, st)
	}
	if st.Theirs == "" || st.Behind == 0 {
		return res, r.synced(ctx, st.Theirs)
	}
	res.Commits = st.Behind
	oldTree := emptyTree
	if st.Local != "" {
		oldTree = st.Local + "^{tree}"
	}
	var newHead, newTree string
	if st.Ahead == 0 {
		res.Kind, newHead, newTree = "fast-forward", st.Theirs, st.Theirs+"^{tree}"
	} else {
		res.Kind = "merge"
		tree, conflicts, err := r.mergeTree(ctx, "HEAD")
		if err != nil {
			return res, err
		}
		if len(conflicts) > 0 {
			if !resolved {
				return res, r.conflict(ctx, st.Theirs, tree, conflicts, nil)
			}
			stale, err := r.changedSinceReported(ctx, st.Theirs, conflicts)
			if err != nil {
				return res, err
			}
			if len(stale) > 0 {
				return res, r.conflict(ctx, st.Theirs, tree, conflicts, stale)
			}
			if tree, err = r.takeLocal(ctx, tree, st.Local, conflicts); err != nil {
				return res, err
			}
			res.Resolved = conflicts
		}
		msg := fmt.Sprintf("sync: merge %s from %s\n\n", shortID(st.Theirs), r.remote)
		if len(res.Resolved) > 0 {
			msg += "Resolved by hand: " + strings.Join(res.Resolved, ", ") + "\n\n"
		}
		c, err := r.hist.Git(ctx, []byte(msg+"Dream-Kind: sync\n"), "commit-tree", tree, "-p", st.Local, "-p", st.Theirs, "-F", "-")
		if err != nil {
			return res, fmt.Errorf("gitsync: recording the merge: %w", err)
		}
		newHead, newTree = strings.TrimSpace(string(c)), tree
	}
	files, err := r.apply(ctx, oldTree, newTree)
	res.Files = files
	if err != nil {
		return res, err
	}
	if err := r.moveHead(ctx, st.Local, newHead, "dream sync: pull"); err != nil {
		return res, err
	}
	res.Head = newHead
	return res, r.synced(ctx, st.Theirs)
}

// moveHead moves the branch from old (the head the change was computed
// on: nothing else may have moved it while we hold the lock, and if it
// did, this fails loud) to head, and the index with it.
func (r *Repo) moveHead(ctx context.Context, old, head, why string) error {
	if old == "" {
		old = strings.Repeat("0", 40)
	}
	if _, err := r.git(ctx, "update-ref", "-m", why, "HEAD", head, old); err != nil {
		return fmt.Errorf("gitsync: moving the branch (the memory has the new content; the next sync records it): %w", err)
	}
	if _, err := r.git(ctx, "read-tree", head); err != nil {
		return fmt.Errorf("gitsync: refreshing the index: %w", err)
	}
	return nil
}

// synced records theirs as the remote head this machine is now in sync
// with, and forgets a conflict reported before.
func (r *Repo) synced(ctx context.Context, theirs string) error {
	if theirs != "" {
		if err := r.setRef(ctx, r.syncedRef(), theirs); err != nil {
			return err
		}
	}
	if err := r.setRef(ctx, r.conflictRef(), ""); err != nil {
		return err
	}
	return os.RemoveAll(r.conflictDir())
}

// mergeTree merges without a work tree. On a conflict it returns the
// conflicted files and the merged tree, in which each of them holds both
// versions between git's conflict markers.
//
// It merges ours (HEAD) with the fetched ref, by name: the names are the
// markers' labels, and the callers compared the two just now.
func (r *Repo) mergeTree(ctx context.Context, ours string) (tree string, conflicts []string, err error) {
	out, err := r.hist.Git(ctx, nil, "merge-tree", "--write-tree", "--allow-unrelated-histories", "--no-messages", "--name-only", "-z", ours, r.fetchedRef())
	parts := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if err != nil && audit.GitExitCode(err) != 1 {
		return "", nil, fmt.Errorf("gitsync: merging: %w", err)
	}
	if len(parts) == 0 || parts[0] == "" {
		return "", nil, fmt.Errorf("gitsync: merge-tree wrote no tree: %v", err)
	}
	if err != nil {
		for _, p := range parts[1:] {
			if p != "" {
				conflicts = append(conflicts, p)
			}
		}
		if len(conflicts) == 0 {
			return "", nil, fmt.Errorf("gitsync: merging: %w", err)
		}
	}
	return parts[0], conflicts, nil
}

// apply lands the difference between two trees in the memory dir through
// a journal transaction, and returns the files it changed in the Syncer
// contract's type (nil when it landed nothing because of an error).
func (r *Repo) apply(ctx context.Context, oldTree, newTree string) ([]dream.Change, error) {
	raw, err := r.hist.Git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--raw", oldTree, newTree)
	if err != nil {
		return nil, fmt.Errorf("gitsync: listing the remote's changes: %w", err)
	}
	entries, err := parseRaw(raw)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return []dream.Change{}, nil
	}
	for _, e := range entries {
		if err := checkEntry(e); err != nil {
			return nil, err
		}
	}
	id := "sync-" + time.Now().UTC().Format("20060102-150405.000000000")
	txn, err := journal.Begin(r.stateDir, r.hist.MemoryDir(), id)
	if err != nil {
		return nil, fmt.Errorf("gitsync: staging: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = txn.Discard()
		}
	}()
	root, err := os.OpenRoot(txn.Dir())
	if err != nil {
		return nil, fmt.Errorf("gitsync: staging: %w", err)
	}
	defer root.Close()
	if err := r.stage(ctx, root, entries); err != nil {
		return nil, err
	}
	changes, err := txn.Changes()
	if err != nil {
		return nil, fmt.Errorf("gitsync: %w", err)
	}
	if r.fence != nil {
		if err := r.fence(ctx); err != nil {
			return nil, err
		}
	}
	applied, err := txn.Commit()
	done = true
	if err != nil {
		return changesOf(applied), fmt.Errorf("gitsync: landing the remote's changes: %w", err)
	}
	return changesOf(changes), nil
}

// changesOf converts the journal's changes to the Syncer contract's; nil
// stays nil (nothing landed), anything else is never nil, so JSON shows [].
func changesOf(cs []journal.Change) []dream.Change {
	if cs == nil {
		return nil
	}
	out := make([]dream.Change, 0, len(cs))
	for _, c := range cs {
		out = append(out, dream.Change{Path: c.Path, Kind: c.Kind, Added: c.Added, Removed: c.Removed})
	}
	return out
}

// stage writes the remote's changes, entries, into the transaction's
// staging copy (root): a removal removes, anything else is the blob with
// its mode. An entry outside this memory's scope is left alone.
func (r *Repo) stage(ctx context.Context, root *os.Root, entries []rawEntry) error {
	for _, e := range entries {
		if !r.hist.InScope(e.path) {
			// Out of this memory's scope (a nanobot workspace records only
			// its memory files): another history's record of it must not
			// delete or overwrite the user's file here.
			continue
		}
		rel := filepath.FromSlash(e.path)
		if e.status == 'D' {
			if err := root.Remove(rel); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("gitsync: staging the removal of %s: %w", e.path, err)
			}
			continue
		}
		blob, err := r.hist.Git(ctx, nil, "cat-file", "blob", e.newSHA)
		if err != nil {
			return fmt.Errorf("gitsync: reading %s from the remote's history: %w", e.path, err)
		}
		perm := os.FileMode(0o644)
		if e.newMode == "100755" {
			perm = 0o755
		}
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("gitsync: staging %s: %w", e.path, err)
			}
		}
		// A dream's staging copy may hold a file here already: replace it.
		_ = root.Remove(rel)
		if err := root.WriteFile(rel, blob, perm); err != nil {
			return fmt.Errorf("gitsync: staging %s: %w", e.path, err)
		}
	}
	return nil
}

// rawEntry is one line of `git diff-tree --raw -z`.
type rawEntry struct {
	newMode, newSHA string
	status          byte
	path            string
}

func parseRaw(b []byte) ([]rawEntry, error) {
	var out []rawEntry
	fields := bytes.Split(b, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		meta := string(fields[i])
		if meta == "" {
			break
		}
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(f) != 5 || len(f[4]) == 0 {
			return nil, fmt.Errorf("gitsync: unexpected diff-tree line %q", meta)
		}
		out = append(out, rawEntry{newMode: f[1], newSHA: f[3], status: f[4][0], path: string(fields[i+1])})
	}
	return out, nil
}

// checkEntry refuses what must not be written into memory from a remote.
func checkEntry(e rawEntry) error {
	p := e.path
	clean := path.Clean(p)
	if p == "" || clean != p || path.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("%w: path %q", ErrUnsafe, p)
	}
	for _, part := range strings.Split(p, "/") {
		if strings.EqualFold(part, ".git") || strings.HasPrefix(part, fsutil.TempPrefix) {
			return fmt.Errorf("%w: path %q", ErrUnsafe, p)
		}
	}
	if p == journal.LockName {
		return fmt.Errorf("%w: the lock file %q", ErrUnsafe, p)
	}
	if e.status == 'D' {
		return nil
	}
	if e.newMode != "100644" && e.newMode != "100755" {
		return fmt.Errorf("%w: %q has mode %s (only regular files are memory)", ErrUnsafe, p, e.newMode)
	}
	return nil
}

// Push sends the local main to the remote's branch if the remote lacks
// commits of it, and returns how many commits it pushed. It pushes nothing
// over a rewritten remote (ErrRewritten): that would put back what was
// purged from it.
func (r *Repo) Push(ctx context.Context) (int, error) {
	var st dream.SyncState
	if err := r.compare(ctx, &st, "HEAD"); err != nil {
		return 0, fmt.Errorf("gitsync: %w", err)
	}
	if st.State == "rewritten" {
		return 0, r.rewrittenError(ctx, st)
	}
	if st.Local == "" || st.Ahead == 0 {
		return 0, nil
	}
	if _, err := r.git(ctx, "push", "--quiet", "--", r.remote, st.Local+":refs/heads/"+r.branch); err != nil {
		// git says "! [rejected] ... (fetch first)" or "(non-fast-forward)"
		// for a remote that moved; "[remote rejected]" is the server
		// refusing the push itself, which a pull would not cure.
		msg := flat(err.Error())
		if strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "(fetch first)") {
			return 0, fmt.Errorf("%w: %s", ErrRejected, msg)
		}
		return 0, fmt.Errorf("pushing to %s failed: %s", r.remote, msg)
	}
	if err := r.setRef(ctx, r.fetchedRef(), st.Local); err != nil {
		return st.Ahead, err
	}
	return st.Ahead, r.setRef(ctx, r.syncedRef(), st.Local)
}

// flat puts git's several lines of stderr on one, for a report.
func flat(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " | ")
}

func shortID(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
