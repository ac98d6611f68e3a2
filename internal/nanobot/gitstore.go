package nanobot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Commit prefixes nanobot itself uses (nanobot/command/builtin.py and
// nanobot/cli/gateway_runtime.py); nanobot's /dream-log lists commits whose
// message starts with "dream:".
const (
	CommitManual   = "dream: manual run"
	CommitPeriodic = "dream: periodic memory consolidation"
)

// gitTracked are the files nanobot's GitStore tracks (MemoryStore.__init__).
var gitTracked = []string{SoulFile, UserFile, MemoryFile, "memory/.dream_cursor"}

// diffMaxChars caps the diff block of a commit message
// (gitstore.py, _WORKING_TREE_DIFF_MAX_CHARS).
const diffMaxChars = 6000

// HasGitStore reports whether the workspace has nanobot's git store: a
// .git directory at its root.
func HasGitStore(workspace string) bool {
	fi, err := os.Stat(filepath.Join(workspace, ".git"))
	return err == nil && fi.IsDir()
}

// CommitGitStore records a landed dream in nanobot's own git store, so that
// nanobot's /dream-log and /dream-restore see it: the tracked files are
// staged and committed with a message built from the real diff of the
// content files against HEAD (nanobot's build_dream_commit_message over
// summarize_working_tree), never from the model's account. It returns the
// commit id, or "" when there is no store or no content file changed (a
// no-op dream enters no commit, as in nanobot's _commit_dream_changes).
func CommitGitStore(ctx context.Context, workspace, prefix string) (string, error) {
	if !HasGitStore(workspace) {
		return "", nil
	}
	body, err := summarizeWorkingTree(ctx, workspace)
	if err != nil || body == "" {
		return "", err
	}
	var paths []string
	for _, p := range gitTracked {
		if _, err := os.Stat(filepath.Join(workspace, filepath.FromSlash(p))); err == nil {
			paths = append(paths, p)
		}
	}
	if _, err := git(ctx, workspace, append([]string{"add", "--"}, paths...)...); err != nil {
		return "", err
	}
	msg := prefix + "\n\n" + body
	// Author and committer as nanobot's auto_commit writes them.
	commit := []string{"-c", "user.name=nanobot", "-c", "user.email=nanobot@dream", "commit", "--no-verify", "--quiet", "-m", msg, "--"}
	if _, err := git(ctx, workspace, append(commit, paths...)...); err != nil {
		return "", err
	}
	out, err := git(ctx, workspace, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// summarizeWorkingTree is gitstore.py's summarize_working_tree: per changed
// content file "path: +A -R", a total line, and the unified diff (capped).
func summarizeWorkingTree(ctx context.Context, workspace string) (string, error) {
	hasHead := true
	if _, err := git(ctx, workspace, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		hasHead = false
	}
	var lines []string
	var diffs []string
	changed, added, removed := 0, 0, 0
	for _, p := range ContentFiles {
		var before []byte
		if hasHead {
			if out, err := git(ctx, workspace, "show", "HEAD:"+p); err == nil {
				before = []byte(out)
			}
		}
		after, err := os.ReadFile(filepath.Join(workspace, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if bytes.Equal(bytes.ReplaceAll(before, []byte("\r\n"), []byte("\n")), bytes.ReplaceAll(after, []byte("\r\n"), []byte("\n"))) {
			continue
		}
		changed++
		d, a, r, err := unifiedDiff(ctx, workspace, p, before, after)
		if err != nil {
			return "", err
		}
		added += a
		removed += r
		lines = append(lines, fmt.Sprintf("%s: +%d -%d", p, a, r))
		diffs = append(diffs, d)
	}
	if changed == 0 {
		return "", nil
	}
	body := strings.Join(lines, "\n") + fmt.Sprintf("\n%d %s changed, %d %s(+), %d %s(-)",
		changed, plural(changed, "file", "files"), added, plural(added, "insertion", "insertions"), removed, plural(removed, "deletion", "deletions"))
	diff := strings.Join(diffs, "\n")
	if len(diff) > diffMaxChars {
		diff = diff[:diffMaxChars] + "\n...[diff truncated]"
	}
	return body + "\n\n```diff\n" + diff + "\n```", nil
}

// unifiedDiff diffs two versions of path with git's own diff engine.
func unifiedDiff(ctx context.Context, workspace, path string, before, after []byte) (string, int, int, error) {
	dir, err := os.MkdirTemp("", "dream-nanobot-diff-")
	if err != nil {
		return "", 0, 0, err
	}
	defer os.RemoveAll(dir)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, before, 0o600); err != nil {
		return "", 0, 0, err
	}
	if err := os.WriteFile(b, after, 0o600); err != nil {
		return "", 0, 0, err
	}
	out, _ := git(ctx, workspace, "diff", "--no-index", "--no-color", "--no-ext-diff", "-U3", "--", a, b) // exit 1 means "differs"
	var body []string
	adds, rems := 0, 0
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git"), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "new file"), strings.HasPrefix(l, "deleted file"):
			continue
		case strings.HasPrefix(l, "--- "):
			body = append(body, "--- "+path)
		case strings.HasPrefix(l, "+++ "):
			body = append(body, "+++ "+path)
		default:
			if strings.HasPrefix(l, "+") {
				adds++
			} else if strings.HasPrefix(l, "-") {
				rems++
			}
			body = append(body, l)
		}
	}
	return strings.Join(body, "\n"), adds, rems, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// git runs git in the workspace with hooks and user configuration out of
// the way, so that nothing but the store's own state shapes the commit.
func git(ctx context.Context, workspace string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", workspace, "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
