package gitsync

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ConflictError is a merge that stops on files this machine and the remote
// changed on the same lines. Nothing changed; the error says which files,
// where both versions of each can be read, and what to run once they are
// resolved.
type ConflictError struct {
	// Files are the conflicted memory files, relative to the memory dir.
	Files []string
	// Remote is the remote commit the merge was tried with.
	Remote string
	// MemoryDir is where the files are to be edited.
	MemoryDir string
	// Marked is a directory outside the memory holding each conflicted file
	// as git merges it: both versions between conflict markers, every change
	// that does not conflict already in.
	Marked string
	// Stale are files a hand resolution was offered for whose remote
	// version is not the one reported (the remote changed them again, or
	// no conflict was reported yet): they must be looked at again.
	Stale []string
}

func (e *ConflictError) Error() string {
	files := strings.Join(e.Files, ", ")
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s changed on the same lines here and in the remote's commit %s; nothing was changed", ErrConflict, files, shortID(e.Remote))
	if len(e.Stale) > 0 {
		fmt.Fprintf(&b, ". Not taken as resolved: the remote's %s is not the version last reported (it changed again, or no conflict was reported yet)", strings.Join(e.Stale, ", "))
	}
	fmt.Fprintf(&b, ". To resolve: edit %s in %s to the text to keep (or delete it to drop it); %s holds each file with both versions marked, this machine's after <<<<<<< HEAD, the remote's before >>>>>>>, and the changes that do not conflict already in. Then run `dream sync --resolved`: your text lands as the merge of both histories", files, e.MemoryDir, e.Marked)
	return b.String()
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// conflict records that a conflict with theirs was reported and writes the
// marked version of each file from the merged tree into the conflict
// directory, outside the memory: an agent loading its memory must never
// read conflict markers.
func (r *Repo) conflict(ctx context.Context, theirs, tree string, files, stale []string) error {
	if err := r.setRef(ctx, r.conflictRef(), theirs); err != nil {
		return err
	}
	e := &ConflictError{Files: files, Remote: theirs, MemoryDir: r.hist.MemoryDir(), Marked: r.conflictDir(), Stale: stale}
	if err := os.RemoveAll(e.Marked); err != nil {
		return fmt.Errorf("%w (and clearing %s failed: %v)", e, e.Marked, err)
	}
	if err := os.MkdirAll(e.Marked, 0o755); err != nil {
		return fmt.Errorf("%w (and writing the marked files failed: %v)", e, err)
	}
	root, err := os.OpenRoot(e.Marked)
	if err != nil {
		return fmt.Errorf("%w (and writing the marked files failed: %v)", e, err)
	}
	defer root.Close()
	for _, f := range files {
		rel := filepath.FromSlash(f)
		blob, err := r.hist.Git(ctx, nil, "cat-file", "blob", tree+":"+f)
		if err != nil || !filepath.IsLocal(rel) {
			continue // deleted on one side: nothing to show
		}
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("%w (and writing %s failed: %v)", e, f, err)
			}
		}
		if err := root.WriteFile(rel, blob, 0o644); err != nil {
			return fmt.Errorf("%w (and writing %s failed: %v)", e, f, err)
		}
	}
	return e
}

// conflictDir is where the marked versions of a reported conflict are.
func (r *Repo) conflictDir() string {
	return filepath.Join(r.stateDir, "sync-conflicts", r.memKey)
}

// changedSinceReported returns the files whose version in theirs is not the
// one the last conflict report showed (all of them when none was made).
func (r *Repo) changedSinceReported(ctx context.Context, theirs string, files []string) ([]string, error) {
	reported, err := r.rev(ctx, r.conflictRef())
	if err != nil || reported == "" {
		return files, err
	}
	was, err := r.entries(ctx, reported, files)
	if err != nil {
		return nil, err
	}
	now, err := r.entries(ctx, theirs, files)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, f := range files {
		if was[f] != now[f] {
			stale = append(stale, f)
		}
	}
	return stale, nil
}

// takeLocal is tree with each of files as it is in local (absent there:
// removed), built in a scratch index so the history's own is untouched.
func (r *Repo) takeLocal(ctx context.Context, tree, local string, files []string) (string, error) {
	mine, err := r.entries(ctx, local, files)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(r.hist.GitDir(), "sync-index-")
	if err != nil {
		return "", fmt.Errorf("gitsync: a scratch index: %w", err)
	}
	defer os.RemoveAll(dir)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}
	if _, err := r.hist.GitEnv(ctx, env, nil, "read-tree", tree); err != nil {
		return "", fmt.Errorf("gitsync: reading the merged tree: %w", err)
	}
	var in bytes.Buffer
	for _, f := range files {
		e := mine[f]
		if e == "" {
			e = "0 " + strings.Repeat("0", 40)
		}
		fmt.Fprintf(&in, "%s\t%s\x00", e, f)
	}
	if _, err := r.hist.GitEnv(ctx, env, in.Bytes(), "update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("gitsync: taking the resolved files: %w", err)
	}
	out, err := r.hist.GitEnv(ctx, env, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("gitsync: writing the resolved tree: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// entries maps each of files present in rev to "mode sha".
func (r *Repo) entries(ctx context.Context, rev string, files []string) (map[string]string, error) {
	out, err := r.hist.Git(ctx, nil, append([]string{"--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", rev, "--"}, files...)...)
	if err != nil {
		return nil, fmt.Errorf("gitsync: listing %s: %w", shortID(rev), err)
	}
	m := map[string]string{}
	for _, rec := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			m[p] = f[0] + " " + f[2]
		}
	}
	return m, nil
}
