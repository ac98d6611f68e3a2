package tools

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// lineReader reads lines of any length while holding at most max bytes of
// each, so that a file with a multi-megabyte line (a minified bundle, one
// huge JSONL record) costs bounded memory.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending, cut to at most max
// bytes (on a rune boundary), and whether it was cut. It returns io.EOF when
// no line is left; a last line without a newline is still returned.
func (l *lineReader) next() (line []byte, cut bool, err error) {
	l.buf = l.buf[:0]
	total := 0 // bytes of the line seen, newline excluded
	for {
		chunk, err := l.br.ReadSlice('\n')
		ended := err == nil
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		total += len(chunk)
		if room := l.max - len(l.buf); room > 0 {
			l.buf = append(l.buf, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case ended:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if total == 0 {
				return nil, false, io.EOF
			}
		default:
			return nil, false, err
		}
		if total > l.max {
			return trimPartialRune(l.buf), true, nil
		}
		return bytes.TrimSuffix(l.buf, []byte{'\r'}), false, nil
	}
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b, left
// there by cutting a line at a byte count.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// truncateRunes cuts s to at most n runes and says how many were dropped.
func truncateRunes(s []byte, n int) ([]byte, int) {
	if len(s) <= n {
		return s, 0
	}
	count := 0
	for i := range string(s) {
		if count == n {
			return s[:i], utf8.RuneCount(s[i:])
		}
		count++
	}
	return s, 0
}

// looksBinary reports whether a file's first bytes are not text: a NUL byte,
// or bytes that are not UTF-8. A multibyte rune cut at the end of the sample
// does not count.
func looksBinary(sample []byte) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	return !utf8.Valid(trimPartialRune(sample))
}
