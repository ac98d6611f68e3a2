package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// transcriptExt is the extension every supported host gives a session
// transcript (Claude Code, Codex CLI, Gemini CLI, nanobot, codebot).
const transcriptExt = ".jsonl"

// subagentsDir is the directory name under which Claude Code keeps the
// transcripts of sub-agents a session spawned
// (<project>/<session>/subagents/agent-*.jsonl). They are not sessions the
// user had: counting them would let one busy session open the gate alone.
const subagentsDir = "subagents"

// readBatch is how many directory entries are read per getdents round. It
// bounds memory on a huge flat directory while keeping system calls few.
const readBatch = 1024

// CountSessionsTouchedSince counts *.jsonl transcripts under dir modified
// strictly after since, excluding the current session (a file named ID.jsonl,
// *_ID.jsonl or, for Codex rollouts, *-ID.jsonl; an empty exclude excludes
// nothing). Mtimes only, never content.
//
// The walk is recursive, because hosts nest transcripts (Claude Code keeps
// <project>/<session>.jsonl, Codex sessions/YYYY/MM/DD/rollout-…-<id>.jsonl).
// Below dir it never follows a symbolic link, neither to a directory nor to a
// file, so a symlink loop cannot hang it; dir itself may be a symlink, since
// users commonly link their agent's home from a dotfiles checkout. Directories
// named "subagents" are not entered (see subagentsDir).
//
// An empty or missing dir counts 0 with a nil error: the host keeps no
// transcripts yet. A dir that is not a directory or cannot be read returns 0
// and a descriptive error that callers may show but should treat as 0.
// Unreadable subdirectories are skipped. ctx is checked between directories;
// once it is done the scan returns 0 and ctx's error.
func CountSessionsTouchedSince(ctx context.Context, dir string, since time.Time, exclude string) (int, error) {
	return countSessions(ctx, dir, scanner{since: since, exclude: exclude, fast: fastStatAvailable}, scanWorkers)
}

// CountSessions is CountSessionsTouchedSince under an agent's own Rule:
// only the files the agent counts as sessions are counted, and current (the
// session id the agent hands its hooks) is left out as the agent names it.
// A nil rule is the generic one.
func CountSessions(ctx context.Context, dir string, since time.Time, rule *Rule, current string) (int, error) {
	return countSessions(ctx, dir, scanner{since: since, exclude: current, rule: rule, fast: fastStatAvailable}, scanWorkers)
}

// scanWorkers is how many directories are scanned at once. Stat calls block
// in the kernel, so a few workers overlap them even on two cores; more would
// only contend on a machine that is busy doing the user's real work.
const scanWorkers = 4

// countSessions is CountSessionsTouchedSince with the stat strategy and the
// parallelism made explicit, so that benchmarks can compare them on one tree.
func countSessions(ctx context.Context, dir string, s scanner, workers int) (int, error) {
	if dir == "" {
		return 0, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("scan sessions in %s: %w", dir, err)
	}
	s.root = dir
	root, err := openDir(dir, true)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return 0, fmt.Errorf("scan sessions in %s: not a directory", dir)
		}
		return 0, fmt.Errorf("scan sessions in %s: %w", dir, err)
	}
	pending, n := s.scanDir(root)
	root.Close()
	more, err := walk(ctx, pending, s, workers)
	if err != nil {
		return 0, fmt.Errorf("scan sessions in %s: %w", dir, err)
	}
	return n + more, nil
}

// scanner is the per-walk configuration; it is read-only, so workers share it.
type scanner struct {
	since   time.Time
	exclude string
	fast    bool
	// rule is the agent's session rule; nil is the generic one.
	rule *Rule
	// root is the sessions dir, for the depth Rule callbacks are given.
	root string
}

// scanPath opens and scans one directory below the root. A directory that is
// unreadable, vanished, or was swapped for a symlink since it was listed is
// skipped: undercounting only postpones a dream.
func (s scanner) scanPath(path string) ([]string, int) {
	d, err := openDir(path, false)
	if err != nil {
		return nil, 0
	}
	defer d.Close()
	return s.scanDir(d)
}

// scanDir counts the matching transcripts directly in d and returns the paths
// of the subdirectories still to visit with the count. Directories are closed
// before their children are opened, so a deep tree never holds more than one
// descriptor per worker.
func (s scanner) scanDir(d *os.File) (subdirs []string, n int) {
	depth := depthOf(s.root, d.Name())
	for {
		entries, err := d.ReadDir(readBatch)
		for _, e := range entries {
			name := e.Name()
			switch t := e.Type(); {
			case t.IsDir():
				if s.rule.descend(depth, name) {
					subdirs = append(subdirs, filepath.Join(d.Name(), name))
				}
			case t.IsRegular():
				id, ok := s.rule.match(depth, name)
				if !ok || s.rule.same(id, s.exclude) || s.rule.shadowed(d.Name(), name) {
					continue
				}
				var after bool
				if s.fast {
					after = statAfter(d, name, s.since)
				} else {
					after = infoAfter(e, s.since)
				}
				if after && s.rule.keep(filepath.Join(d.Name(), name)) {
					n++
				}
			}
			// Symlinks, sockets, devices: never followed, never counted.
		}
		// io.EOF ends the listing; any other error ends this directory with
		// what was read so far. ReadDir(n > 0) never returns no entries and
		// no error, but an empty batch must not spin.
		if err != nil || len(entries) == 0 {
			return subdirs, n
		}
	}
}

// isTranscript reports whether name is a session transcript other than the
// current session's. The three excluded forms are the hosts' own names:
// ID.jsonl (Claude Code, nanobot), *_ID.jsonl (channel-prefixed keys) and
// *-ID.jsonl (Codex rollout-<timestamp>-<id>.jsonl).
func isTranscript(name, exclude string) bool {
	var generic *Rule
	id, ok := generic.match(0, name)
	return ok && !generic.same(id, exclude)
}

// infoAfter is the portable mtime check: DirEntry.Info is an lstat, so a
// file replaced by a symlink after listing is judged by the link itself.
func infoAfter(e fs.DirEntry, since time.Time) bool {
	info, err := e.Info()
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	return info.ModTime().After(since)
}
