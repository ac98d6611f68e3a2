package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// The gates of a job on a repository: the commit gate (commits since the
// job last ran) and the file gate (a watched file changed since then).

// CommitsSince counts the commits reachable from HEAD in repo committed
// after since (all of them when since is zero), with one `git rev-list
// --count`: git walks the history, not dream. The environment's
// GIT_DIR and friends are dropped, so the count is the repository's
// whatever shell the gate runs from.
func CommitsSince(ctx context.Context, repo string, since time.Time) (int, error) {
	if repo == "" {
		return 0, errors.New("no repository to count commits in")
	}
	args := []string{"-C", repo, "rev-list", "--count"}
	if !since.IsZero() {
		// git dates commits to the second and counts those of the second
		// since names: the next whole second leaves out the commits the
		// last run saw, at the cost of one landing in the same second
		// after it (undercounting only postpones a run).
		args = append(args, "--since="+since.Truncate(time.Second).Add(time.Second).UTC().Format(time.RFC3339))
	}
	cmd := exec.CommandContext(ctx, "git", append(args, "HEAD")...)
	cmd.Env = GitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return 0, fmt.Errorf("counting the commits in %s: %s", repo, msg)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("counting the commits in %s: git printed %q", repo, out)
	}
	return n, nil
}

// GitEnv is this process's environment without the variables that would
// point git at another repository or index than the one asked about.
func GitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// errFound stops ChangedSince's walk at the first changed file.
var errFound = errors.New("found")

// ChangedSince returns the first file in repo matching one of patterns
// (slash-separated, relative to repo) whose mtime is after since, or ""
// when none is (every matching file, when since is zero, counts as
// changed). It reads directory entries and mtimes only and stops at the
// first change; .git is never walked.
func ChangedSince(ctx context.Context, repo string, patterns []string, since time.Time) (string, error) {
	if repo == "" {
		return "", errors.New("no repository to watch files in")
	}
	fsys := os.DirFS(repo)
	found := ""
	for _, p := range patterns {
		err := doublestar.GlobWalk(fsys, p, func(path string, d fs.DirEntry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if path == ".git" || strings.HasPrefix(path, ".git/") || d.IsDir() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil // gone since it was listed
			}
			if since.IsZero() || info.ModTime().After(since) {
				found = path
				return errFound
			}
			return nil
		}, doublestar.WithNoFollow())
		if errors.Is(err, errFound) {
			return found, nil
		}
		if err != nil {
			return "", fmt.Errorf("watching %s in %s: %w", p, repo, err)
		}
	}
	return "", nil
}
