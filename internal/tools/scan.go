package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// scanBufSize is the read buffer of one grep. A line longer than it grows the
// buffer up to scanMaxLine, so that a multi-megabyte JSONL record is still
// matched in place (regexp on []byte uses its literal-prefix skip); a line
// longer still is streamed through in chunks (matched, cut in output). Either
// way a grep of a multi-gigabyte transcript holds at most scanMaxLine bytes.
const (
	scanBufSize = 1 << 20
	scanMaxLine = 16 << 20
)

// errBinary marks a file skipped because it is not text.
var errBinary = errors.New("binary file")

// matchFunc receives one matching line: its 1-based number, the line as held
// (the whole line, or the start of an overlong one, then cut is true) and the
// byte offset of the match within it (-1 when unknown). It returns false to
// stop scanning the file. line is only valid during the call.
type matchFunc func(lineNo int64, line []byte, at int, cut bool) bool

// scanner streams files through a matcher. One scanner reuses its buffer
// across the files of a grep; it is not safe for concurrent use.
type scanner struct {
	m          *matcher
	buf        []byte
	maxBuf     int // the buffer grows up to this for long lines
	start, end int // unread data is buf[start:end]
	r          io.Reader
	eof        bool
	// holdBytes is how much of an overlong line is kept for display.
	holdBytes int
	hold      []byte
}

func newScanner(m *matcher, bufSize, maxLine, holdBytes int) *scanner {
	// The buffer must hold a literal's overlap plus fresh data, or the
	// chunked search of an overlong line could not make progress.
	maxBuf := max(bufSize, maxLine, 2*len(m.lit)+8)
	return &scanner{m: m, buf: make([]byte, bufSize), maxBuf: maxBuf, holdBytes: holdBytes}
}

// grow doubles the buffer, up to maxBuf, keeping the unread data. It reports
// whether there was room to grow.
func (s *scanner) grow() bool {
	if len(s.buf) >= s.maxBuf {
		return false
	}
	nb := make([]byte, min(2*len(s.buf), s.maxBuf))
	s.end = copy(nb, s.buf[s.start:s.end])
	s.start = 0
	s.buf = nb
	return true
}

// fill moves unread data to the front and reads once more. It reports
// whether anything was added.
func (s *scanner) fill() (bool, error) {
	if s.eof {
		return false, nil
	}
	if s.start > 0 {
		s.end = copy(s.buf, s.buf[s.start:s.end])
		s.start = 0
	}
	if s.end == len(s.buf) {
		return false, nil
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if errors.Is(err, io.EOF) {
		s.eof = true
		err = nil
	}
	if err != nil {
		return n > 0, fmt.Errorf("read: %w", err)
	}
	return n > 0 || !s.eof, nil
}

// scan reads r to the end (or until onMatch returns false) and reports each
// matching line. A file whose first bytes contain a NUL is skipped with
// errBinary, as ripgrep does.
func (s *scanner) scan(ctx context.Context, r io.Reader, onMatch matchFunc) error {
	s.r, s.start, s.end, s.eof = r, 0, 0, false
	defer func() { s.r = nil }()
	first := true
	var lineNo int64 = 1 // number of the line starting at buf[start]
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := s.fill(); err != nil {
			return err
		}
		if first {
			first = false
			if bytes.IndexByte(s.buf[s.start:min(s.end, s.start+8<<10)], 0) >= 0 {
				return errBinary
			}
		}
		data := s.buf[s.start:s.end]
		if len(data) == 0 && s.eof {
			return nil
		}
		var region []byte
		if nl := bytes.LastIndexByte(data, '\n'); nl >= 0 {
			region = data[:nl+1]
		} else if s.eof {
			region = data // last line, no newline
		} else if s.end-s.start < len(s.buf) || s.grow() {
			continue // a partial line; read more
		} else {
			matched, at, err := s.longLine(ctx)
			if err != nil {
				return err
			}
			if matched && !onMatch(lineNo, s.hold, at, true) {
				return nil
			}
			lineNo++
			continue
		}
		lines, stop := s.scanRegion(region, lineNo, onMatch)
		s.start += len(region)
		lineNo += lines
		if stop {
			return nil
		}
	}
}

// scanRegion matches the complete lines in region (which ends with a newline,
// or at end of file). base is the number of its first line. It returns the
// lines passed and whether onMatch asked to stop.
func (s *scanner) scanRegion(region []byte, base int64, onMatch matchFunc) (int64, bool) {
	var lines int64      // newlines in region[:counted]
	pos, counted := 0, 0 // next byte to search; bytes already counted
	var fs foldSearch
	if s.m.fold != nil {
		fs = newFoldSearch(s.m.fold, region)
	}
	for pos < len(region) {
		ls, le, at := pos, 0, -1
		if s.m.lit != nil || s.m.fold != nil {
			hit := s.prefilter(region, pos, &fs)
			if hit < 0 {
				break
			}
			ls = pos + bytes.LastIndexByte(region[pos:hit], '\n') + 1
			le = lineEnd(region, hit)
			at = hit - ls
		} else {
			le = lineEnd(region, pos)
		}
		if s.m.re != nil {
			loc := s.m.re.FindIndex(region[ls:le])
			if loc == nil {
				pos = le + 1
				continue
			}
			at = loc[0]
		}
		lines += int64(bytes.Count(region[counted:ls], newline))
		counted = ls
		if !onMatch(base+lines, region[ls:le], at, false) {
			return lines, true
		}
		pos = le + 1
	}
	return lines + int64(bytes.Count(region[counted:], newline)), false
}

// prefilter returns the offset of the next occurrence of the matcher's
// literal in region at or after pos, or -1. fs searches for a fold literal.
func (s *scanner) prefilter(region []byte, pos int, fs *foldSearch) int {
	if s.m.fold != nil {
		return fs.next(pos)
	}
	if i := bytes.Index(region[pos:], s.m.lit); i >= 0 {
		return pos + i
	}
	return -1
}

var newline = []byte{'\n'}

// lineEnd returns the index of the newline ending the line that holds i, or
// len(b) for a last line without one.
func lineEnd(b []byte, i int) int {
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(b)
}

// longLine consumes a line longer than the buffer, which fills it now with
// no newline in view. It keeps the line's first holdBytes in s.hold for
// display and matches the whole line without holding it: a literal by
// searching chunk by chunk with an overlap of len(lit)-1 bytes, a regexp by
// streaming the line through MatchReader. On return buf[start:end] holds what
// followed the line.
func (s *scanner) longLine(ctx context.Context) (matched bool, at int, err error) {
	s.hold = append(s.hold[:0], s.buf[s.start:min(s.end, s.start+s.holdBytes)]...)
	s.hold = trimPartialRune(s.hold)
	if s.m.re != nil {
		rr := &lineRuneReader{s: s}
		matched = s.m.re.MatchReader(rr)
		if rr.err != nil {
			return false, -1, rr.err
		}
		return matched, -1, s.skipLine(ctx)
	}
	at = -1
	lit := s.m.lit
	offset := 0 // bytes of the line before buf[start]
	for {
		if err := ctx.Err(); err != nil {
			return false, -1, err
		}
		data := s.buf[s.start:s.end]
		nl := bytes.IndexByte(data, '\n')
		seg := data
		if nl >= 0 {
			seg = data[:nl]
		}
		if !matched {
			if i := bytes.Index(seg, lit); i >= 0 {
				matched = true
				if offset+i+len(lit) <= len(s.hold) {
					at = offset + i
				}
			}
		}
		if nl >= 0 {
			s.start += nl + 1
			return matched, at, nil
		}
		if s.eof {
			s.start = s.end
			return matched, at, nil
		}
		keep := 0
		if !matched {
			keep = min(len(lit)-1, len(data))
		}
		offset += len(data) - keep
		s.start = s.end - keep
		if _, err := s.fill(); err != nil {
			return false, -1, err
		}
	}
}

// skipLine discards input up to and including the next newline.
func (s *scanner) skipLine(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if nl := bytes.IndexByte(s.buf[s.start:s.end], '\n'); nl >= 0 {
			s.start += nl + 1
			return nil
		}
		s.start = s.end
		if s.eof {
			return nil
		}
		if _, err := s.fill(); err != nil {
			return err
		}
	}
}

// lineRuneReader presents the rest of the current line as an io.RuneReader
// ending at (not consuming) the newline, so that a regexp can run over a line
// of any length in the scanner's fixed buffer.
type lineRuneReader struct {
	s   *scanner
	err error
}

func (r *lineRuneReader) ReadRune() (rune, int, error) {
	s := r.s
	for {
		data := s.buf[s.start:s.end]
		if len(data) > 0 && data[0] == '\n' {
			return 0, 0, io.EOF
		}
		if utf8.FullRune(data) || (s.eof && len(data) > 0) {
			c, size := utf8.DecodeRune(data)
			s.start += size
			return c, size, nil
		}
		if s.eof {
			return 0, 0, io.EOF
		}
		if _, err := s.fill(); err != nil {
			r.err = err
			return 0, 0, err
		}
	}
}

var _ io.RuneReader = (*lineRuneReader)(nil)
