package tools

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// matcher is a compiled grep pattern. Most patterns a model greps
// transcripts for are plain words or contain one, and bytes.Index (vectorised)
// is an order of magnitude faster than running a regexp over every line, so:
//   - a pattern that is a plain literal is searched with bytes.Index alone;
//   - a regexp that every match must contain a literal in (its longest
//     required literal) is searched for that literal first, and the regexp
//     runs only on the lines that contain it;
//   - any other regexp runs on every line.
type matcher struct {
	// lit is the whole pattern when re is nil, otherwise a prefilter every
	// matching line contains; nil when there is no usable literal.
	lit []byte
	// re is nil on the pure literal path.
	re *regexp.Regexp
}

// newMatcher compiles pattern with Go's RE2 syntax.
func newMatcher(pattern string) (*matcher, error) {
	if pattern == "" {
		return nil, fmt.Errorf("pattern is empty")
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid regular expression (Go RE2 syntax; escape metacharacters such as ( [ . * with \\ to match them literally): %w", err)
	}
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	parsed = parsed.Simplify()
	if strings.Contains(requiredLiteral(parsed), "\n") {
		return nil, fmt.Errorf("pattern requires a newline, but grep matches one line at a time; search for a part of one line")
	}
	if parsed.Op == syntax.OpLiteral && parsed.Flags&syntax.FoldCase == 0 {
		return &matcher{lit: []byte(string(parsed.Rune))}, nil
	}
	m := &matcher{re: re}
	if lit := requiredLiteral(parsed); lit != "" {
		m.lit = []byte(lit)
	}
	return m, nil
}

// requiredLiteral returns the longest case-sensitive literal that every match
// of re contains, or "" if it cannot tell.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// matchLine reports whether line (without its newline) matches, and where
// the match starts.
func (m *matcher) matchLine(line []byte) (int, bool) {
	if m.re == nil {
		i := bytes.Index(line, m.lit)
		return i, i >= 0
	}
	loc := m.re.FindIndex(line)
	if loc == nil {
		return -1, false
	}
	return loc[0], true
}
