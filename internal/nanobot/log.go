package nanobot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/dreamkit/dream/internal/fsutil"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LogOptions tune a Log; the zero value is nanobot's behaviour.
type LogOptions struct {
	// ReadOnly never writes: no index is created or extended. A dream reading
	// a staging copy uses it, so that the copy changes only where the dream
	// means it to.
	ReadOnly bool
	// Stride is the index's spacing in entries; DefaultStride when zero.
	Stride int
	// Now is the clock for timestamps; nil means time.Now.
	Now func() time.Time
}

// Log is one history.jsonl with its cursor files. Its methods are safe for
// concurrent use, also from several processes.
type Log struct {
	dir, path, idxPath, cursorPath, dreamPath string
	opt                                       LogOptions
	mu                                        sync.Mutex // appends in this process; the flock covers the others
}

// OpenLog returns the log of a nanobot memory dir (WORKSPACE/memory). It does
// no I/O: a missing log reads as empty and is created by the first Append.
func OpenLog(memoryDir string, opt LogOptions) *Log {
	if opt.Stride <= 0 {
		opt.Stride = DefaultStride
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Log{
		dir:        memoryDir,
		path:       filepath.Join(memoryDir, LogName),
		idxPath:    filepath.Join(memoryDir, IndexName),
		cursorPath: filepath.Join(memoryDir, CursorName),
		dreamPath:  filepath.Join(memoryDir, DreamCursorName),
		opt:        opt,
	}
}

// Path is the log file.
func (l *Log) Path() string { return l.path }

// Problem is a line that was skipped: corrupt, of the wrong shape, or torn.
// Problems are reported, never fatal, and never rewritten away.
type Problem struct {
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
}

// ErrReadOnly: a write on a Log opened with ReadOnly.
var ErrReadOnly = errors.New("history: the log is open read-only")

// AppendOptions are the per-entry settings of Append.
type AppendOptions struct {
	// MaxChars caps the entry; EntryHardCap when zero. Archive callers pass
	// RawArchiveMaxChars or SummaryMaxChars.
	MaxChars int
	// SessionKey tags the entry with its session ("cli:direct",
	// "telegram:42", ...); empty for none.
	SessionKey string
}

// Append cleans text (nanobot's order: trailing space, cap, strip leaked
// reasoning), gives it the next cursor and appends it, all under the log's
// lock: the cursor is max(.cursor, the last valid entry) + 1, the line is
// written in one write and synced before .cursor is updated, so that a
// returned cursor is durable and no two appenders, in any process, get the
// same one. A torn last line left by a crashed writer is first closed with a
// newline, so that the new entry never merges into it.
func (l *Log) Append(ctx context.Context, text string, o AppendOptions) (Entry, error) {
	if l.opt.ReadOnly {
		return Entry{}, ErrReadOnly
	}
	e := Entry{Timestamp: l.opt.Now().Format(TimestampLayout), Content: prepare(text, o.MaxChars), SessionKey: o.SessionKey}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return Entry{}, fmt.Errorf("history: %w", err)
	}
	f, err := lockLog(ctx, l.path)
	if err != nil {
		return Entry{}, err
	}
	defer unlockLog(f)
	size, err := fileSize(f)
	if err != nil {
		return Entry{}, err
	}
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return Entry{}, fmt.Errorf("history: reading %s: %w", l.path, err)
		}
		if last[0] != '\n' {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				return Entry{}, fmt.Errorf("history: closing a torn line in %s: %w", l.path, err)
			}
			size++
		}
	}
	latest, err := l.latestLocked(f, size)
	if err != nil {
		return Entry{}, err
	}
	e.Cursor = latest + 1
	line := encodeLine(e)
	if _, err := f.Write(line); err != nil {
		return Entry{}, fmt.Errorf("history: appending to %s: %w", l.path, err)
	}
	if err := f.Sync(); err != nil {
		return Entry{}, fmt.Errorf("history: syncing %s: %w", l.path, err)
	}
	// .cursor is a hint (the next allocation takes the max with the log), so
	// it is replaced atomically but not synced.
	if err := fsutil.WriteFileAtomic(l.cursorPath, []byte(strconv.FormatInt(e.Cursor, 10)), 0o600, false); err != nil {
		return e, fmt.Errorf("history: writing %s: %w", l.cursorPath, err)
	}
	// The index is a cache: failing to extend it only costs the next reader
	// a rebuild.
	_ = extendIndex(l.idxPath, f, size+int64(len(line)), l.opt.Stride)
	return e, nil
}

// latestLocked is nanobot's _next_cursor minus one: the larger of the
// .cursor counter and the last valid entry's cursor; when the tail has no
// valid entry, the largest cursor anywhere in the log.
func (l *Log) latestLocked(f *os.File, size int64) (int64, error) {
	counter, haveCounter := l.readCounter()
	last, ok, err := lastValid(f, size)
	if err != nil {
		return 0, err
	}
	if !ok {
		last, err = maxCursor(f, size)
		if err != nil {
			return 0, err
		}
	}
	if haveCounter && counter > last {
		return counter, nil
	}
	return last, nil
}

func (l *Log) readCounter() (int64, bool) {
	data, err := os.ReadFile(l.cursorPath)
	if err != nil {
		return 0, false
	}
	c, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || c < 0 {
		return 0, false
	}
	return c, true
}

// LatestCursor is the last cursor handed out (0 for an empty log).
func (l *Log) LatestCursor(ctx context.Context) (int64, error) {
	f, size, err := l.openRead()
	if err != nil || f == nil {
		c, _ := l.readCounter()
		return c, err
	}
	defer f.Close()
	return l.latestLocked(f, size)
}

// tailScanLimit bounds the backward search for the last valid entry before
// falling back to a full scan.
const tailScanLimit = 4 << 20

// lastValid returns the cursor of the last valid entry, reading backwards
// from the end; ok is false when none is found in the last tailScanLimit
// bytes.
func lastValid(f *os.File, size int64) (int64, bool, error) {
	var c int64
	found := false
	err := scanBackward(f, size, tailScanLimit, func(line []byte, _ int64, _ bool) bool {
		if e, err := decodeLine(line); err == nil {
			c, found = e.Cursor, true
			return false
		}
		return true
	})
	return c, found, err
}

// scanBackward calls fn for the non-empty lines of the log from the last
// to the first (complete is false for a last line with no newline), until
// fn returns false or limit bytes (0: no limit) have been read.
func scanBackward(f *os.File, size, limit int64, fn func(line []byte, off int64, complete bool) bool) error {
	const chunk = 64 << 10
	end := size
	var partial []byte // the first, possibly incomplete, line of the chunk after this one
	lastLine := true
	for end > 0 && (limit <= 0 || size-end < limit) {
		start := max(0, end-chunk)
		buf := make([]byte, end-start, end-start+int64(len(partial)))
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return fmt.Errorf("history: reading: %w", err)
		}
		buf = append(buf, partial...)
		// Line i of parts starts at start+offsets[i].
		parts := bytes.Split(buf, []byte{'\n'})
		offsets := make([]int64, len(parts))
		var o int64
		for i, p := range parts {
			offsets[i] = start + o
			o += int64(len(p)) + 1
		}
		first := 1 // parts[0] may begin before start
		if start == 0 {
			first = 0
		}
		for i := len(parts) - 1; i >= first; i-- {
			complete := !(lastLine && i == len(parts)-1)
			line := bytes.TrimRight(parts[i], "\r")
			if len(bytes.TrimSpace(line)) == 0 {
				if i == len(parts)-1 {
					lastLine = false // the final newline: the line before it is complete
				}
				continue
			}
			lastLine = false
			if !fn(line, offsets[i], complete) {
				return nil
			}
		}
		partial = parts[0]
		end = start
	}
	return nil
}

// maxCursor is the largest valid cursor in the log (0 when none).
func maxCursor(f *os.File, size int64) (int64, error) {
	var m int64
	err := scanLines(f, 0, size, func(line []byte, _ int64, complete bool) bool {
		if e, err := decodeLine(bytes.TrimSpace(line)); err == nil && e.Cursor > m {
			m = e.Cursor
		}
		return true
	})
	return m, err
}

// scanLines calls fn for every non-empty line in [from, size): complete is
// false for a last line with no newline. fn returns false to stop.
func scanLines(f *os.File, from, size int64, fn func(line []byte, off int64, complete bool) bool) error {
	r := bufio.NewReaderSize(io.NewSectionReader(f, from, size-from), 16<<10)
	off := from
	for {
		line, err := r.ReadBytes('\n')
		n := int64(len(line))
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			if t := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(t)) > 0 {
				if !fn(t, off, complete) {
					return nil
				}
			}
		}
		off += n
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("history: reading: %w", err)
		}
	}
}

func fileSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	return fi.Size(), nil
}

// openRead opens the log for reading; f is nil when it does not exist.
func (l *Log) openRead() (*os.File, int64, error) {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("history: %w", err)
	}
	size, err := fileSize(f)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// Query selects entries.
type Query struct {
	// Limit is the most entries returned, oldest first; 0 means all.
	Limit int
	// Session keeps only this session's entries; with Unified, this
	// session's plus every non-internal session's (and untagged ones), as
	// nanobot's read_recent_history_for_prompt does.
	Session string
	Unified bool
}

func (q Query) match(e Entry) bool {
	if q.Session == "" {
		return true
	}
	if e.SessionKey == q.Session {
		return true
	}
	return q.Unified && !IsInternalSession(e.SessionKey)
}

// IsInternalSession reports whether a session key belongs to nanobot's own
// background work: a unified view of the history leaves its entries out
// (memory.py, _INTERNAL_HISTORY_SESSION_PREFIXES and
// _INTERNAL_HISTORY_SESSION_KEYS) and compaction never touches its session
// (autocompact.py, _INTERNAL_SESSION_PREFIXES).
func IsInternalSession(key string) bool {
	return key == "heartbeat" || strings.HasPrefix(key, "cron:") || strings.HasPrefix(key, "dream:")
}

// ReadResult is what a read found.
type ReadResult struct {
	Entries  []Entry   `json:"entries"`
	Problems []Problem `json:"problems,omitempty"`
	// Indexed is true when the read started from the offset index.
	Indexed bool `json:"-"`
}

// After returns the entries whose cursor is above since, oldest first, as
// nanobot's read_unprocessed_history does, with the lines it skipped. With a
// valid index it reads only from the indexed entry at or before since.
func (l *Log) After(ctx context.Context, since int64, q Query) (ReadResult, error) {
	f, size, err := l.openRead()
	if err != nil || f == nil {
		return ReadResult{Entries: []Entry{}}, err
	}
	defer f.Close()
	var from int64
	indexed := false
	x, err := openIndex(l.idxPath, false, f, size)
	switch {
	case err == nil:
		if x.h.Flags&flagNonMonotonic == 0 {
			from, err = x.search(since)
			indexed = err == nil
			if err != nil {
				from = 0
			}
		}
		x.Close()
	case !l.opt.ReadOnly:
		// Missing or stale: rebuild it under the lock so that the next
		// read is cheap again. This read scans the whole log once.
		l.reindex(ctx)
	}
	res := ReadResult{Entries: []Entry{}, Indexed: indexed}
	err = scanLines(f, from, size, func(line []byte, off int64, complete bool) bool {
		if ctx.Err() != nil {
			return false
		}
		if c, ok := peekCursor(line); ok && c <= since && complete {
			return true // consumed: not worth a decode
		}
		e, derr := decodeLine(line)
		if derr != nil {
			reason := derr.Error()
			if !complete {
				reason = "torn last line (a writer is mid-append or crashed): " + reason
			}
			res.Problems = append(res.Problems, Problem{Offset: off, Reason: reason})
			return true
		}
		if e.Cursor <= since || !q.match(e) {
			return true
		}
		res.Entries = append(res.Entries, e)
		return q.Limit <= 0 || len(res.Entries) < q.Limit
	})
	if err == nil {
		err = ctx.Err()
	}
	return res, err
}

// reindex rebuilds the index under the log's lock; best effort.
func (l *Log) reindex(ctx context.Context) {
	f, err := lockLog(ctx, l.path)
	if err != nil {
		return
	}
	defer unlockLog(f)
	if size, err := fileSize(f); err == nil {
		_ = extendIndex(l.idxPath, f, size, l.opt.Stride)
	}
}

// Tail returns the last n matching entries, oldest first, reading the log
// backwards, so that it costs O(n) for an unfiltered tail; n <= 0 means all.
func (l *Log) Tail(ctx context.Context, n int, q Query) (ReadResult, error) {
	if n <= 0 {
		return l.After(ctx, -1, q)
	}
	f, size, err := l.openRead()
	if err != nil || f == nil {
		return ReadResult{Entries: []Entry{}}, err
	}
	defer f.Close()
	res := ReadResult{Entries: []Entry{}}
	err = scanBackward(f, size, 0, func(line []byte, off int64, complete bool) bool {
		if ctx.Err() != nil {
			return false
		}
		e, derr := decodeLine(line)
		if derr != nil {
			reason := derr.Error()
			if !complete {
				reason = "torn last line (a writer is mid-append or crashed): " + reason
			}
			res.Problems = append(res.Problems, Problem{Offset: off, Reason: reason})
			return true
		}
		if q.match(e) {
			res.Entries = append(res.Entries, e)
		}
		return len(res.Entries) < n
	})
	slices.Reverse(res.Entries)
	slices.Reverse(res.Problems)
	if err == nil {
		err = ctx.Err()
	}
	return res, err
}

// DreamCursor is the last entry a dream consumed (0 when none), from
// .dream_cursor, as nanobot's get_last_dream_cursor reads it.
func (l *Log) DreamCursor() (int64, error) {
	data, err := os.ReadFile(l.dreamPath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	c, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, nil // nanobot treats an unreadable cursor as 0
	}
	return c, nil
}

// SetDreamCursor records that a dream consumed every entry up to c. The
// file is replaced atomically and durably.
func (l *Log) SetDreamCursor(c int64) error {
	if l.opt.ReadOnly {
		return ErrReadOnly
	}
	if err := fsutil.WriteFileAtomic(l.dreamPath, []byte(strconv.FormatInt(c, 10)), 0o600, true); err != nil {
		return fmt.Errorf("history: writing %s: %w", l.dreamPath, err)
	}
	return nil
}

// CompactReport says what Compact did.
type CompactReport struct {
	Before, After int
	// RetainedUnprocessed is true when more than the limit was kept because
	// the dream had not consumed them yet.
	RetainedUnprocessed bool
}

// Compact drops the oldest lines so that at most maxEntries remain, but
// never an entry above the dream cursor (nanobot's compact_history: keep
// from min(len-max, first unprocessed)). Corrupt lines in the kept part are
// kept byte for byte. The new log replaces the old one atomically under the
// lock, and the index is rebuilt.
func (l *Log) Compact(ctx context.Context, maxEntries int) (CompactReport, error) {
	if l.opt.ReadOnly {
		return CompactReport{}, ErrReadOnly
	}
	if maxEntries <= 0 {
		return CompactReport{}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := os.Stat(l.path); errors.Is(err, os.ErrNotExist) {
		return CompactReport{}, nil
	}
	f, err := lockLog(ctx, l.path)
	if err != nil {
		return CompactReport{}, err
	}
	defer unlockLog(f)
	dream, err := l.DreamCursor()
	if err != nil {
		return CompactReport{}, err
	}
	size, err := fileSize(f)
	if err != nil {
		return CompactReport{}, err
	}
	type span struct{ off, end int64 }
	var lines []span
	firstUnprocessed := -1
	err = scanLines(f, 0, size, func(line []byte, off int64, complete bool) bool {
		if firstUnprocessed < 0 {
			if e, err := decodeLine(line); err == nil && e.Cursor > dream {
				firstUnprocessed = len(lines)
			}
		}
		lines = append(lines, span{off, off + int64(len(line))})
		return true
	})
	if err != nil {
		return CompactReport{}, err
	}
	rep := CompactReport{Before: len(lines), After: len(lines)}
	if len(lines) <= maxEntries {
		return rep, nil
	}
	if firstUnprocessed < 0 {
		firstUnprocessed = len(lines)
	}
	keepFrom := min(len(lines)-maxEntries, firstUnprocessed)
	rep.RetainedUnprocessed = len(lines)-keepFrom > maxEntries
	if keepFrom <= 0 {
		return rep, nil
	}
	var out bytes.Buffer
	for _, s := range lines[keepFrom:] {
		b := make([]byte, s.end-s.off)
		if _, err := f.ReadAt(b, s.off); err != nil && err != io.EOF {
			return CompactReport{}, fmt.Errorf("history: compacting: %w", err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	if err := fsutil.WriteFileAtomic(l.path, out.Bytes(), 0o600, true); err != nil {
		return CompactReport{}, fmt.Errorf("history: compacting %s: %w", l.path, err)
	}
	rep.After = len(lines) - keepFrom
	if nf, err := os.Open(l.path); err == nil {
		if n, err := fileSize(nf); err == nil {
			_ = rebuildIndex(l.idxPath, nf, n, l.opt.Stride)
		}
		nf.Close()
	}
	return rep, nil
}
