package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// writeCommit and moveHead are git's plumbing for what `git commit` does
// here, with write-tree before them (see record): commit-tree writes the
// same author, committer, message and parent a commit would, so the same
// commit object, and update-ref moves HEAD. `git commit` also refreshes
// the whole index (an lstat of every file of the memory, and the index
// written again) and looks for hooks: a third of a settled one-file
// dream's git time for nothing the record uses. Its `git gc --auto` a
// record runs itself (gcAuto).

// writeCommit writes the commit object of tree with message msg on parent
// ("" for the first commit) and returns its id.
func (h *History) writeCommit(ctx context.Context, parent, tree, msg string) (string, error) {
	args := []string{"commit-tree", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	out, err := h.git(ctx, []byte(msg), append(args, "-F", "-")...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// moveHead moves HEAD from parent ("" when nothing is recorded yet) to the
// commit sha. Moving HEAD only from the commit's parent makes a concurrent
// writer fail the record cleanly instead of losing the other commit; the
// reflog line, with the commit's subject, is the one `git commit` writes,
// for people reading `git reflog`.
func (h *History) moveHead(ctx context.Context, parent, sha, subject string) error {
	old, reflog := parent, "commit: "
	if parent == "" {
		// update-ref's "must not exist yet"
		old, reflog = strings.Repeat("0", len(sha)), "commit (initial): "
	}
	_, err := h.git(ctx, nil, "update-ref", "-m", reflog+subject, "HEAD", sha, old)
	return err
}

// head returns the commit HEAD points to, "" when nothing is recorded yet.
// It reads the ref as git stores it (HEAD naming a branch, the branch's
// loose ref file or its line in packed-refs) rather than starting a git
// process for it; anything else (a detached or unusual HEAD) is asked of
// git. A wrong answer could not commit anything wrong: update-ref moves
// HEAD only from this value.
func (h *History) head(ctx context.Context) (string, error) {
	if sha, ok := h.readHead(); ok {
		return sha, nil
	}
	out, err := h.git(ctx, nil, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		if exitCode(err) > 0 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// readHead resolves HEAD from the files of a repository git's files ref
// backend wrote; ok is false when they hold anything it does not expect.
func (h *History) readHead() (string, bool) {
	data, err := os.ReadFile(filepath.Join(h.gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/heads/") || !filepath.IsLocal(ref) {
		return "", false
	}
	data, err = os.ReadFile(filepath.Join(h.gitDir, filepath.FromSlash(ref)))
	if err == nil {
		sha := strings.TrimSpace(string(data))
		return sha, isObjectID(sha)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	sha, err := packedRef(filepath.Join(h.gitDir, "packed-refs"), ref)
	if err != nil {
		return "", false
	}
	return sha, true // "" when the branch has no commit yet
}

// packedRef finds ref in a packed-refs file: "<id> <ref>" lines, after an
// optional "# pack-refs with:" header, with "^<id>" lines peeling tags. A
// missing file holds no refs.
func packedRef(file, ref string) (string, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		sha, name, ok := strings.Cut(line, " ")
		if !ok || !isObjectID(sha) {
			return "", fmt.Errorf("packed-refs: unexpected line %q", line)
		}
		if name == ref {
			return sha, nil
		}
	}
	return "", sc.Err()
}

// isObjectID reports whether s is a full SHA-1 or SHA-256 object id.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
