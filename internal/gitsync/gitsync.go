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

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
)

// trackingPrefix holds, per remote branch, the remote's branch as last
// fetched.
const trackingPrefix = "refs/dream-sync/"

// emptyTree is git's (SHA-1) empty tree, the "before" of a first pull.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

var (
	// ErrConflict: the remote and this machine changed the same lines; the
	// memory is unchanged and the message names the files.
	ErrConflict = errors.New("the remote's memory conflicts with this machine's")
	// ErrRejected: the remote has commits this machine has not merged (a
	// push that is not a fast-forward); pull first.
	ErrRejected = errors.New("the remote refused the push (it has commits not merged here)")
	// ErrUnsafe: the remote holds something that cannot be memory (a
	// symlink, a submodule, a path escaping the memory dir).
	ErrUnsafe = errors.New("the remote holds an entry dream will not write into memory")
)

// ErrBranch marks a remote branch name git would refuse or read as an
// option.
var ErrBranch = errors.New("gitsync: invalid remote branch name")

// Repo is one memory's history and its remote branch.
type Repo struct {
	hist     *audit.History
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
	return &Repo{hist: hist, remote: remote, branch: branch, stateDir: stateDir}, nil
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

// trackingRef keeps the remote's branch as last fetched.
func (r *Repo) trackingRef() string { return trackingPrefix + r.branch }

// Remote is the URL as configured.
func (r *Repo) Remote() string { return r.remote }

// State is how this machine's history stands against the remote's.
type State struct {
	Remote string `json:"remote"`
	// Branch is this memory's branch on the remote.
	Branch string `json:"branch,omitempty"`
	// State is "in sync", "ahead", "behind", "diverged", "remote empty",
	// "nothing local" or "unreachable".
	State  string `json:"state"`
	Ahead  int    `json:"ahead"`
	Behind int    `json:"behind"`
	Local  string `json:"local,omitempty"`
	Theirs string `json:"remote_head,omitempty"`
	Error  string `json:"error,omitempty"`
}

// PullResult says what a pull did.
type PullResult struct {
	// Kind is "up to date", "fast-forward" or "merge".
	Kind string `json:"kind"`
	// Commits is how many remote commits were brought in.
	Commits int `json:"commits"`
	// Files are the memory files the pull changed.
	Files []journal.Change `json:"files"`
	// Head is the new local head.
	Head string `json:"head,omitempty"`
}

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

// Fetch brings the remote's branch into the tracking ref (or drops the ref
// when the remote has no such branch yet). Only this memory's branch is
// fetched: the other memories on the remote are none of this one's business.
func (r *Repo) Fetch(ctx context.Context) error {
	if _, err := r.git(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", r.remote, "+refs/heads/"+r.branch+":"+r.trackingRef()); err != nil {
		// A remote without the branch: ls-remote tells an absent branch
		// (reachable, empty answer) from an unreachable remote.
		out, lerr := r.git(ctx, "ls-remote", "--heads", "--", r.remote, "refs/heads/"+r.branch)
		if lerr != nil || out != "" {
			return fmt.Errorf("gitsync: fetching %s: %w", r.remote, err)
		}
		if _, derr := r.git(ctx, "update-ref", "-d", r.trackingRef()); derr != nil {
			return fmt.Errorf("gitsync: dropping the stale tracking ref: %w", derr)
		}
	}
	return nil
}

// Status fetches and compares; an unreachable remote is a State, not an
// error, so `dream status` can show it.
func (r *Repo) Status(ctx context.Context) State {
	st := State{Remote: r.remote, Branch: r.branch}
	if err := r.Fetch(ctx); err != nil {
		st.State, st.Error = "unreachable", err.Error()
		return st
	}
	if err := r.compare(ctx, &st); err != nil {
		st.State, st.Error = "unreachable", err.Error()
	}
	return st
}

// compare fills st from HEAD and the tracking ref.
func (r *Repo) compare(ctx context.Context, st *State) error {
	local, err := r.rev(ctx, "HEAD")
	if err != nil {
		return err
	}
	theirs, err := r.rev(ctx, r.trackingRef())
	if err != nil {
		return err
	}
	st.Local, st.Theirs = local, theirs
	switch {
	case theirs == "" && local == "":
		st.State = "in sync"
		return nil
	case theirs == "":
		st.State = "remote empty"
		n, err := r.git(ctx, "rev-list", "--count", "HEAD")
		if err != nil {
			return err
		}
		st.Ahead, _ = strconv.Atoi(n)
		return nil
	case local == "":
		st.State = "nothing local"
		n, err := r.git(ctx, "rev-list", "--count", theirs)
		if err != nil {
			return err
		}
		st.Behind, _ = strconv.Atoi(n)
		return nil
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
		st.State = "in sync"
	case st.Behind == 0:
		st.State = "ahead"
	case st.Ahead == 0:
		st.State = "behind"
	default:
		st.State = "diverged"
	}
	return nil
}

// Pull fetches and merges the remote's branch into the memory dir. The
// caller holds the consolidation lock and has recorded hand edits (so the
// memory dir equals HEAD). On ErrConflict or ErrUnsafe nothing changed.
func (r *Repo) Pull(ctx context.Context) (PullResult, error) {
	res := PullResult{Kind: "up to date", Files: []journal.Change{}}
	if err := r.Fetch(ctx); err != nil {
		return res, err
	}
	var st State
	if err := r.compare(ctx, &st); err != nil {
		return res, fmt.Errorf("gitsync: %w", err)
	}
	res.Head = st.Local
	if st.Theirs == "" || st.Behind == 0 {
		return res, nil
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
		tree, err := r.mergeTree(ctx, st.Local, st.Theirs)
		if err != nil {
			return res, err
		}
		msg := fmt.Sprintf("sync: merge %s from %s\n\nDream-Kind: sync\n", shortID(st.Theirs), r.remote)
		c, err := r.hist.Git(ctx, []byte(msg), "commit-tree", tree, "-p", st.Local, "-p", st.Theirs, "-F", "-")
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
	// Move the branch only from the head we merged into: nothing else may
	// have moved it while we hold the lock, and if it did, this fails loud.
	old := st.Local
	if old == "" {
		old = strings.Repeat("0", 40)
	}
	if _, err := r.git(ctx, "update-ref", "-m", "dream sync: pull", "HEAD", newHead, old); err != nil {
		return res, fmt.Errorf("gitsync: moving the branch (the memory has the remote's content; the next sync records it): %w", err)
	}
	if _, err := r.git(ctx, "read-tree", newHead); err != nil {
		return res, fmt.Errorf("gitsync: refreshing the index: %w", err)
	}
	res.Head = newHead
	return res, nil
}

// mergeTree merges without a work tree; a conflict names the files.
func (r *Repo) mergeTree(ctx context.Context, ours, theirs string) (string, error) {
	out, err := r.hist.Git(ctx, nil, "merge-tree", "--write-tree", "--allow-unrelated-histories", "--no-messages", "--name-only", "-z", ours, theirs)
	parts := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if err != nil {
		if audit.GitExitCode(err) == 1 {
			var files []string
			for _, p := range parts[1:] {
				if p != "" {
					files = append(files, p)
				}
			}
			// merge-tree prints its output on stdout even on exit 1, but our
			// runner keeps only stderr then: ask for the names again.
			if len(files) == 0 {
				files = r.conflictedFiles(ctx, ours, theirs)
			}
			return "", fmt.Errorf("%w: %s; nothing was changed: resolve it in the audit repository or edit the file on one machine and run `dream sync`", ErrConflict, strings.Join(files, ", "))
		}
		return "", fmt.Errorf("gitsync: merging: %w", err)
	}
	return parts[0], nil
}

// conflictedFiles lists the paths both sides changed since their merge base.
func (r *Repo) conflictedFiles(ctx context.Context, ours, theirs string) []string {
	base, err := r.git(ctx, "merge-base", ours, theirs)
	if err != nil {
		base = emptyTree
	}
	a, _ := r.git(ctx, "diff", "--name-only", base, ours)
	b, _ := r.git(ctx, "diff", "--name-only", base, theirs)
	in := map[string]bool{}
	for _, f := range strings.Split(a, "\n") {
		in[f] = f != ""
	}
	var both []string
	for _, f := range strings.Split(b, "\n") {
		if in[f] {
			both = append(both, f)
		}
	}
	return both
}

// apply lands the difference between two trees in the memory dir through
// a journal transaction.
func (r *Repo) apply(ctx context.Context, oldTree, newTree string) ([]journal.Change, error) {
	raw, err := r.hist.Git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--raw", oldTree, newTree)
	if err != nil {
		return nil, fmt.Errorf("gitsync: listing the remote's changes: %w", err)
	}
	entries, err := parseRaw(raw)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return []journal.Change{}, nil
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
				return nil, fmt.Errorf("gitsync: staging the removal of %s: %w", e.path, err)
			}
			continue
		}
		blob, err := r.hist.Git(ctx, nil, "cat-file", "blob", e.newSHA)
		if err != nil {
			return nil, fmt.Errorf("gitsync: reading %s from the remote's history: %w", e.path, err)
		}
		perm := os.FileMode(0o644)
		if e.newMode == "100755" {
			perm = 0o755
		}
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("gitsync: staging %s: %w", e.path, err)
			}
		}
		// A dream's staging copy may hold a file here already: replace it.
		_ = root.Remove(rel)
		if err := root.WriteFile(rel, blob, perm); err != nil {
			return nil, fmt.Errorf("gitsync: staging %s: %w", e.path, err)
		}
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
		return applied, fmt.Errorf("gitsync: landing the remote's changes: %w", err)
	}
	return changes, nil
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
// commits of it.
// It returns how many commits were pushed.
func (r *Repo) Push(ctx context.Context) (int, error) {
	var st State
	if err := r.compare(ctx, &st); err != nil {
		return 0, fmt.Errorf("gitsync: %w", err)
	}
	if st.Local == "" || st.Ahead == 0 {
		return 0, nil
	}
	if _, err := r.git(ctx, "push", "--quiet", "--", r.remote, st.Local+":refs/heads/"+r.branch); err != nil {
		msg := err.Error()
		if strings.Contains(msg, "rejected") || strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "fetch first") {
			return 0, fmt.Errorf("%w: %v", ErrRejected, err)
		}
		return 0, fmt.Errorf("gitsync: pushing to %s: %w", r.remote, err)
	}
	if _, err := r.git(ctx, "update-ref", r.trackingRef(), st.Local); err != nil {
		return st.Ahead, fmt.Errorf("gitsync: recording the push: %w", err)
	}
	return st.Ahead, nil
}

func shortID(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
