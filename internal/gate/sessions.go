package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
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
// descriptor per worker (the stat goroutines of countCandidates share it).
//
// The listing's own file types decide what is a directory and what a file,
// so directories are never stat'ed; only the names the rule accepts are
// (the mtime is the one thing a listing cannot give).
func (s scanner) scanDir(d *os.File) (subdirs []string, n int) {
	depth := depthOf(s.root, d.Name())
	var candidates []string
	// An error ends this directory with what was read so far: undercounting
	// only postpones a dream.
	_ = listDir(d, func(name string, t entryType) {
		if t == typeUnknown {
			t = lstatType(d, name)
		}
		switch t {
		case typeDir:
			if s.rule.descend(depth, name) {
				subdirs = append(subdirs, filepath.Join(d.Name(), name))
			}
		case typeRegular:
			id, ok := s.rule.match(depth, name)
			if ok && !s.rule.same(id, s.exclude) {
				candidates = append(candidates, name)
				if len(candidates) == flushCandidates {
					n += s.countCandidates(d, candidates)
					candidates = candidates[:0]
				}
			}
		}
		// Symlinks, sockets, devices: never followed, never counted.
	})
	return subdirs, n + s.countCandidates(d, candidates)
}

// flushCandidates bounds how many names of one directory are held before
// they are stat'ed, so that a huge flat directory costs bounded memory; it
// is large enough to split across the cores.
const flushCandidates = 8192

// statChunk is the fewest candidates worth a goroutine of their own: below
// it the goroutine costs more than the stats it would take over.
const statChunk = 512

// countCandidates counts the candidates in d that were modified after the
// cutoff and that the rule keeps. A big directory (Claude Code keeps every
// session of a project side by side) is split across the cores: each stat is
// a short, CPU-bound system call, so they run in parallel, which find(1),
// one stat at a time, cannot do.
func (s scanner) countCandidates(d *os.File, names []string) int {
	par := min(runtime.GOMAXPROCS(0), len(names)/statChunk)
	if par <= 1 {
		return s.countSome(d, names)
	}
	per := (len(names) + par - 1) / par
	var total atomic.Int64
	var wg sync.WaitGroup
	for lo := per; lo < len(names); lo += per {
		part := names[lo:min(lo+per, len(names))]
		wg.Go(func() { total.Add(int64(s.countSome(d, part))) })
	}
	n := s.countSome(d, names[:per])
	wg.Wait()
	return n + int(total.Load())
}

// countSome is countCandidates on one goroutine.
func (s scanner) countSome(d *os.File, names []string) int {
	n := 0
	var buf []byte // statAfter's scratch
	for _, name := range names {
		if s.rule.shadowed(d.Name(), name) {
			continue
		}
		var after bool
		if s.fast {
			after = statAfter(d, name, s.since, &buf)
		} else {
			after = lstatAfter(filepath.Join(d.Name(), name), s.since)
		}
		if after && s.rule.keep(d.Name(), name) {
			n++
		}
	}
	return n
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

// lstatAfter is the portable mtime check, an lstat by path: a file replaced
// by a symlink after listing is judged by the link itself, and a link never
// counts.
func lstatAfter(path string, since time.Time) bool {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	return info.ModTime().After(since)
}

// entryType is a directory entry's type as its listing reports it.
type entryType uint8

const (
	typeOther entryType = iota // symlink, socket, device, FIFO: never counted
	typeDir
	typeRegular
	// typeUnknown: the filesystem did not say (d_type DT_UNKNOWN); the scan
	// asks lstatType.
	typeUnknown
)

// typeOfMode is the entryType of an lstat'ed mode.
func typeOfMode(m fs.FileMode) entryType {
	switch {
	case m.IsDir():
		return typeDir
	case m.IsRegular():
		return typeRegular
	}
	return typeOther
}

// lstatType is the type of name in d when the listing did not say. What
// cannot be stat'ed any more is other: it is skipped.
func lstatType(d *os.File, name string) entryType {
	info, err := os.Lstat(filepath.Join(d.Name(), name))
	if err != nil {
		return typeOther
	}
	return typeOfMode(info.Mode())
}
