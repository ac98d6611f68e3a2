package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// gitBinary finds git on PATH.
func gitBinary() (string, error) {
	p, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("%w: install git to keep an audit history: %v", ErrNoGit, err)
	}
	return p, nil
}

// isolation are the settings passed on every command so nothing from the
// user's or system's git configuration changes what is recorded or runs
// code: hooks, filters, signing, pagers, colour, path quoting, line endings.
var isolation = []string{
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.quotePath=false",
	"-c", "core.autocrlf=false",
	"-c", "core.safecrlf=false",
	"-c", "core.fsmonitor=false",
	"-c", "core.excludesFile=" + os.DevNull,
	"-c", "core.attributesFile=" + os.DevNull,
	// core.trustctime stays on, although a hard-linked staging view changes
	// every memory file's ctime (links are counted in the inode) and git then
	// hashes each file once more after a dream: the ctime is the one stat
	// field a user's tools cannot put back (cp -p, rsync -t, touch -r keep
	// size and mtime), and a same-size edit missed here would be recorded as
	// the next dream's and undone with it.
	"-c", "commit.gpgSign=false",
	// gc --auto (after each record, see gcAuto) packs in the foreground:
	// nothing is left running once a record returns.
	"-c", "gc.autoDetach=false",
	// A file over this size is stored whole and diffed as binary: a pasted
	// 200 MB log is never loaded to compute a line diff (files this large
	// are opaque to dream).
	"-c", "core.bigFileThreshold=" + bigFileThreshold,
	"-c", "color.ui=never",
	"-c", "diff.noprefix=false",
	"-c", "diff.mnemonicPrefix=false",
	"-c", "diff.renames=false",
	"--no-pager",
}

// bigFileThreshold is git's spelling of journal.OpaqueSize.
const bigFileThreshold = "8m"

// env is the process environment minus every GIT_* variable (a dream run
// from inside a git hook must not write into that repository's index), plus
// the variables that pin this repository and its identity.
func (h *History) env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") || strings.HasPrefix(kv, "LANGUAGE=") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"GIT_DIR="+h.gitDir,
		"GIT_WORK_TREE="+h.memDir,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=dream", "GIT_AUTHOR_EMAIL=dream@localhost",
		"GIT_COMMITTER_NAME=dream", "GIT_COMMITTER_EMAIL=dream@localhost",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat", "PAGER=cat",
		"LC_ALL=C", "LANGUAGE=C",
	)
	if h.indexFile != "" {
		out = append(out, "GIT_INDEX_FILE="+h.indexFile)
	}
	return append(out, extra...)
}

// gitError carries git's exit code and stderr.
type gitError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode returns git's exit code, or -1 if err is not a git exit.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// git runs one git command in the memory dir and returns its stdout, also
// when git failed: some commands answer on stdout with a failing status
// (merge-tree's conflicted files, exit 1).
func (h *History) git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return h.gitEnv(ctx, nil, stdin, args...)
}

func (h *History) gitEnv(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, h.gitBin, append(append([]string{}, isolation...), args...)...)
	cmd.Dir = h.memDir
	cmd.Env = h.env(env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("git %s: %w", args[0], ctxErr)
		}
		ge := &gitError{args: args, code: -1, stderr: stderr.String(), err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.code = ee.ExitCode()
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}

// gitTo runs one git command and streams its stdout into w, so a large
// blob never sits in memory.
func (h *History) gitTo(ctx context.Context, w io.Writer, args ...string) error {
	return h.gitEnvTo(ctx, nil, w, args...)
}

func (h *History) gitEnvTo(ctx context.Context, env []string, w io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, h.gitBin, append(append([]string{}, isolation...), args...)...)
	cmd.Dir = h.memDir
	cmd.Env = h.env(env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("git %s: %w", args[0], ctxErr)
		}
		ge := &gitError{args: args, code: -1, stderr: stderr.String(), err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.code = ee.ExitCode()
		}
		return ge
	}
	return nil
}

// gitChange runs one `git diff -z --raw --numstat -p` and returns its
// records whole and at most maxPatch bytes of the patch after them; git is
// stopped once they are read (its broken pipe is not an error), so a
// record's message costs the diff it quotes, not the whole patch.
func (h *History) gitChange(ctx context.Context, env []string, maxPatch int, args ...string) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &changeWriter{maxPatch: maxPatch, patchAt: -1, full: cancel}
	err := h.gitEnvTo(ctx, env, w, args...)
	if w.done {
		return w.buf.Bytes(), nil
	}
	return w.buf.Bytes(), err
}

// changeWriter keeps the NUL-terminated records of a -z diff and the
// first maxPatch bytes of the patch that follows the empty record ending
// them (two NULs in a row: no record is empty), then refuses more,
// calling full once.
type changeWriter struct {
	buf      bytes.Buffer
	maxPatch int
	patchAt  int // where the patch starts in buf; -1 until the empty record
	prevNUL  bool
	done     bool
	full     func()
}

func (w *changeWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, io.ErrShortWrite
	}
	n := len(p)
	if w.patchAt < 0 {
		i := 0
		for ; i < len(p); i++ {
			if p[i] == 0 && w.prevNUL {
				break
			}
			w.prevNUL = p[i] == 0
		}
		if i == len(p) {
			return w.buf.Write(p)
		}
		w.buf.Write(p[:i+1])
		w.patchAt = w.buf.Len()
		p = p[i+1:]
	}
	if room := w.patchAt + w.maxPatch - w.buf.Len(); len(p) > room {
		w.buf.Write(p[:room])
		w.done = true
		w.full()
		return 0, io.ErrShortWrite
	}
	w.buf.Write(p)
	return n, nil
}
