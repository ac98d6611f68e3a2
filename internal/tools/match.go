package tools

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
)

// matcher is a compiled grep pattern. Most patterns a model greps
// transcripts for are plain words or contain one, and bytes.Index (vectorised)
// is an order of magnitude faster than running a regexp over every line, so:
//   - a pattern that is a plain literal is searched with bytes.Index alone;
//   - a regexp that every match must contain a literal in (its longest
//     required literal) is searched for that literal first, and the regexp
//     runs only on the lines that contain it;
//   - a case-insensitive regexp such as (?i)econnrefused [0-9.]+ has no such
//     literal, but an ASCII one that every match contains in some mix of
//     cases, so that is searched for first (see foldLiteral);
//   - any other regexp runs on every line.
type matcher struct {
	// lit is the whole pattern when re is nil, otherwise a prefilter every
	// matching line contains; nil when there is no usable literal.
	lit []byte
	// fold, when lit is nil, is a prefilter every matching line contains
	// up to ASCII case; nil when there is none.
	fold *foldLiteral
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
	if parsed.Op == syntax.OpLiteral && !folds(parsed) {
		return &matcher{lit: []byte(string(parsed.Rune))}, nil
	}
	m := &matcher{re: re}
	lit, fold := requiredLiteral(parsed), requiredFoldLiteral(parsed)
	// A case-sensitive literal is searched for with bytes.Index, faster
	// than the case-insensitive search, so it wins unless it is shorter
	// (and so, likely, more common).
	if len(fold) > len(lit) {
		m.fold = newFoldLiteral(fold)
	} else if lit != "" {
		m.lit = []byte(lit)
	}
	return m, nil
}

// folds reports whether the literal re matches more than its own runes: it
// is case-insensitive and some rune has another case. (?i)1234 does not fold.
func folds(re *syntax.Regexp) bool {
	if re.Flags&syntax.FoldCase == 0 {
		return false
	}
	for _, r := range re.Rune {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// requiredLiteral returns the longest case-sensitive literal that every match
// of re contains, or "" if it cannot tell.
func requiredLiteral(re *syntax.Regexp) string {
	return longestRequired(re, func(lit *syntax.Regexp) string {
		if folds(lit) {
			return ""
		}
		return string(lit.Rune)
	})
}

// longestRequired returns the longest of the strings that pick chooses from
// the literals every match of re passes through, or "" if it cannot tell.
// pick sees each such OpLiteral and returns a string every match of it
// contains (in the sense the caller searches for).
func longestRequired(re *syntax.Regexp, pick func(*syntax.Regexp) string) string {
	switch re.Op {
	case syntax.OpLiteral:
		return pick(re)
	case syntax.OpCapture, syntax.OpPlus:
		return longestRequired(re.Sub[0], pick)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return longestRequired(re.Sub[0], pick)
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := longestRequired(sub, pick); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}
