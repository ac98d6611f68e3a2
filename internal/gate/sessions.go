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
// descriptor per worker (the stat goroutines of statPool share it).
//
// The listing's own file types decide what is a directory and what a file,
// so directories are never stat'ed; only the names the rule accepts are
// (the mtime is the one thing a listing cannot give).
func (s scanner) scanDir(d *os.File) (subdirs []string, n int) {
	depth := depthOf(s.root, d.Name())
	pool := statPool{s: s, d: d}
	candidates := make([]string, 0, statChunk)
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
				if len(candidates) == statChunk {
					pool.submit(candidates)
					candidates = make([]string, 0, statChunk)
				}
			}
		}
		// Symlinks, sockets, devices: never followed, never counted.
	})
	n = s.countSome(d, candidates)
	return subdirs, n + pool.wait()
}

// statChunk is how many candidates of one directory are stat'ed as one
// piece of work: the fewest worth handing to another goroutine, few enough
// that the listing is never far ahead of the stats.
const statChunk = 512

// statPool stats the candidates of one big directory while it is still
// being listed. Claude Code keeps every session of a project side by side,
// so a directory may hold thousands; each stat is a short, CPU-bound system
// call, so chunks of them run on the other cores (GOMAXPROCS-1 helpers,
// started with the first full chunk) while the listing goroutine goes on
// reading the directory and takes a chunk itself whenever the helpers are
// busy. find(1), one stat at a time after each listing, can do neither. At
// most two chunks per helper are held at once, so a huge directory costs
// bounded memory.
type statPool struct {
	s     scanner
	d     *os.File
	work  chan []string
	wg    sync.WaitGroup
	total atomic.Int64
}

// submit counts names, on a helper if one is free.
func (p *statPool) submit(names []string) {
	if p.work == nil {
		helpers := runtime.GOMAXPROCS(0) - 1
		if helpers < 1 {
			p.total.Add(int64(p.s.countSome(p.d, names)))
			return
		}
		p.work = make(chan []string, helpers)
		for range helpers {
			p.wg.Go(func() {
				for names := range p.work {
					p.total.Add(int64(p.s.countSome(p.d, names)))
				}
			})
		}
	}
	select {
	case p.work <- names:
	default:
		p.total.Add(int64(p.s.countSome(p.d, names)))
	}
}

// wait is the count of everything submitted, once the helpers are done.
func (p *statPool) wait() int {
	if p.work != nil {
		close(p.work)
		p.wg.Wait()
	}
	return int(p.total.Load())
}

// countSome counts the candidates in d that were modified after the cutoff
// and that the rule keeps, on the calling goroutine.
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
