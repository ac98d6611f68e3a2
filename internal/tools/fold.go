package tools

import (
	"bytes"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldLiteral is the prefilter of a case-insensitive regexp: an ASCII string
// that every match contains in some mix of upper and lower case. Without it
// (?i)econnrefused [0-9.]+ would run the regexp on every line, some 35 times
// slower than ripgrep. Go has no vectorised case-insensitive search, so it
// looks for the literal's rarest byte in both cases with bytes.IndexByte
// (vectorised) and compares the literal around each hit.
type foldLiteral struct {
	lit    []byte // lower case
	rare   int    // index in lit of the byte searched for
	lo, up byte   // its two cases; equal for a byte without case
}

// requiredFoldLiteral returns, in lower case, the longest ASCII string that
// every match of re contains up to ASCII case, or "" if it cannot tell.
func requiredFoldLiteral(re *syntax.Regexp) string {
	return longestRequired(re, foldRun)
}

// foldRun returns the longest run of lit's runes that an ASCII
// case-insensitive comparison finds exactly, in lower case. A rune outside
// ASCII ends a run, and so, in a case-insensitive literal, does one whose
// other cases are not all ASCII: (?i)k also matches the Kelvin sign K and
// (?i)s the long s ſ, which a byte search for k/K or s/S would miss.
func foldRun(lit *syntax.Regexp) string {
	fold := lit.Flags&syntax.FoldCase != 0
	best, start := "", 0
	for i := 0; i <= len(lit.Rune); i++ {
		if i < len(lit.Rune) && asciiFoldSafe(lit.Rune[i], fold) {
			continue
		}
		if i-start > len(best) {
			best = string(lit.Rune[start:i])
		}
		start = i + 1
	}
	return strings.ToLower(best)
}

// asciiFoldSafe reports whether every rune that r matches is ASCII.
func asciiFoldSafe(r rune, fold bool) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	if !fold {
		return true
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// newFoldLiteral prepares lit (ASCII, lower case, not empty) for searching.
func newFoldLiteral(lit string) *foldLiteral {
	f := &foldLiteral{lit: []byte(lit)}
	for i := range f.lit {
		if byteRarity(f.lit[i]) > byteRarity(f.lit[f.rare]) {
			f.rare = i
		}
	}
	f.lo, f.up = f.lit[f.rare], upperASCII(f.lit[f.rare])
	return f
}

// commonBytes lists the bytes most frequent in transcripts and source text,
// most frequent first (upper-case letters count with their lower case).
const commonBytes = " e\"tnaosir:l,dc\\uhmp.f_g/y-wb0{}1v2k[]3x84569=7()j'q*z<>;#+|@&$%!?~^`"

// byteRarity ranks how seldom b occurs in text, higher being rarer; the
// search looks for the rarest byte of a literal to stop on few false hits.
// A letter ranks half a step more common than its place says, since it is
// searched for in two cases.
func byteRarity(b byte) int {
	i := strings.IndexByte(commonBytes, lowerASCII(b))
	if i < 0 {
		i = len(commonBytes)
	}
	if lowerASCII(b) != upperASCII(b) {
		return 2 * i
	}
	return 2*i + 1
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func upperASCII(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - ('a' - 'A')
	}
	return b
}

// equalAt reports whether b starts with the literal up to ASCII case. b
// holds at least len(f.lit) bytes. A byte of a multibyte rune is never
// equal to the literal's ASCII bytes, so this is the regexp's own folding.
func (f *foldLiteral) equalAt(b []byte) bool {
	for i, c := range f.lit {
		if lowerASCII(b[i]) != c {
			return false
		}
	}
	return true
}

// foldSearch finds a foldLiteral in one buffer, front to back. It keeps the
// next offset of each case of the rare byte, so that when one case is
// frequent and the other absent, the absent one is searched for once, not
// once per hit of the other.
type foldSearch struct {
	f      *foldLiteral
	b      []byte
	lo, up int // next offset of f.lo and f.up; len(b) if none; stale if below the search point
}

func newFoldSearch(f *foldLiteral, b []byte) foldSearch {
	s := foldSearch{f: f, b: b, lo: -1, up: -1}
	if f.lo == f.up {
		s.up = len(b) // one case only: never search for it twice
	}
	return s
}

// next returns the offset of the first occurrence of the literal that starts
// at or after from, or -1. Calls must not go back: from is at least the
// previous result.
func (s *foldSearch) next(from int) int {
	f, n := s.f, len(s.f.lit)
	at := from + f.rare // where the rare byte of such an occurrence can be
	for {
		if s.lo < at {
			s.lo = indexByteFrom(s.b, f.lo, at)
		}
		if s.up < at {
			s.up = indexByteFrom(s.b, f.up, at)
		}
		hit := min(s.lo, s.up)
		start := hit - f.rare
		if start+n > len(s.b) {
			return -1 // no room for the literal here or after
		}
		if f.equalAt(s.b[start:]) {
			return start
		}
		at = hit + 1
	}
}

// indexByteFrom returns the offset of the first c in b at or after i, or
// len(b) if there is none.
func indexByteFrom(b []byte, c byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
}
