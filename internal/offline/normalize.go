package offline

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// bulletRE matches a list item: indentation, marker, text.
var bulletRE = regexp.MustCompile(`^(\s*)(?:[-*+]|\d{1,4}[.)])\s+(.*)$`)

// pinRE is the marker that pins a fact against any change.
var pinRE = regexp.MustCompile(`(?i)<!--\s*pin\s*-->`)

// isPinned reports whether a line carries the pin marker.
func isPinned(s string) bool { return pinRE.MatchString(s) }

// Punctuation that frames words rather than carrying meaning. Only these are
// stripped, and only at the edges of a word: "a != b" must not collapse into
// "a = b", nor "don't" into "dont".
const (
	leadingPunct  = "\"'([{*_~`“‘（【《「『"
	trailingPunct = ".,;:!?\"')]}*_~`。，；：！？、”’）】》」』…"
)

// normalize is the key under which two units are exact duplicates: the text
// without its list marker, lower-cased, with whitespace collapsed and the
// framing punctuation of each word removed.
func normalize(s string) string {
	if m := bulletRE.FindStringSubmatch(s); m != nil {
		s = m[2]
	}
	words := strings.Fields(strings.ToLower(s))
	out := words[:0]
	for _, w := range words {
		w = strings.TrimRight(strings.TrimLeft(w, leadingPunct), trailingPunct)
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// substantial reports whether a normalised unit says enough to be removed as
// a duplicate. Short lines ("- none", "- yes") repeat under different
// headings with different meanings, so they are never deduplicated.
func substantial(norm string) bool {
	if len(strings.Fields(norm)) >= 3 || utf8.RuneCountInString(norm) >= 16 {
		return true
	}
	cjk := 0
	for _, r := range norm {
		if unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) {
			cjk++
		}
	}
	return cjk >= 6
}

// collapseSpace turns every run of whitespace into one space and trims.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// isHeading reports whether a line is an ATX heading.
func isHeading(s string) bool {
	t := strings.TrimLeft(s, " ")
	if len(s)-len(t) > 3 || !strings.HasPrefix(t, "#") {
		return false
	}
	t = strings.TrimLeft(t, "#")
	return t == "" || t[0] == ' ' || t[0] == '\t'
}

// isStructural reports lines that are layout rather than facts: tables,
// rules, html comments and the like never form duplicate units.
func isStructural(s string) bool {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "|") || strings.HasPrefix(t, "<!--") || strings.HasPrefix(t, ">") {
		return true
	}
	if len(t) >= 3 && strings.Trim(t, "-*_ ") == "" {
		return true
	}
	return false
}

// indentOf is the width of the leading whitespace, a tab counting four.
func indentOf(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}
