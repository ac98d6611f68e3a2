package nanobot

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// TruncatedSuffix is what nanobot appends to a cut text
// (nanobot/utils/helpers.py, _TRUNCATED_SUFFIX).
const TruncatedSuffix = "\n... (truncated)"

// Truncate keeps the first maxChars characters (code points, as Python's len
// counts them) and appends TruncatedSuffix; nanobot's truncate_text. A
// non-positive maxChars keeps everything.
func Truncate(s string, maxChars int) string {
	if maxChars <= 0 || utf8.RuneCountInString(s) <= maxChars {
		return s
	}
	n := 0
	for i := range s {
		if n == maxChars {
			return s[:i] + TruncatedSuffix
		}
		n++
	}
	return s
}

// The patterns of nanobot's strip_think (nanobot/utils/helpers.py). RE2 has
// neither back-references nor look-ahead, so the paired-tag rule is one
// pattern per tag and the "malformed opening tag" rule captures the next
// character instead of looking at it.
var thinkTags = []string{"thinking", "thought", "think"} // longest first

// thinkPatterns are compiled on first use (sync.OnceValue), not at package
// init: every `dream` process links this package, and only one that stores
// a history entry needs them.
type thinkPatterns struct {
	blocks                                           []*regexp.Regexp
	unclosed, selfClosingLead, selfClosingTrail      *regexp.Regexp
	malformedOpen, orphanCloseLead, orphanCloseTrail *regexp.Regexp
	channelLead, partialTrail, lonelyOpen            *regexp.Regexp
}

var thinkRE = sync.OnceValue(func() *thinkPatterns {
	p := &thinkPatterns{
		unclosed:         regexp.MustCompile(`^\s*<(?:thinking|thought|think)>[\s\S]*$`),
		selfClosingLead:  regexp.MustCompile(`^\s*<thinking/>\s*`),
		selfClosingTrail: regexp.MustCompile(`\s*<thinking/>\s*$`),
		malformedOpen:    regexp.MustCompile(`<(?:thinking|thought|think)([^A-Za-z0-9_\-:>/]|$)`),
		orphanCloseLead:  regexp.MustCompile(`^\s*</(?:thinking|thought|think)>\s*`),
		orphanCloseTrail: regexp.MustCompile(`\s*</(?:thinking|thought|think)>\s*$`),
		channelLead:      regexp.MustCompile(`^\s*<\|?channel\|?>\s*`),
		partialTrail:     regexp.MustCompile(`(?:</?(?:thinking|thinkin|thinki|thought|though|thoug|think|thou|thin|tho|thi|th|t)>?|<\|?(?:c|ch|cha|chan|chann|channe|channel)(?:\|?>?)?)$`),
		lonelyOpen:       regexp.MustCompile(`^\s*<\|?$`),
	}
	for _, t := range thinkTags {
		p.blocks = append(p.blocks, regexp.MustCompile(`<`+t+`>[\s\S]*?</`+t+`>`))
	}
	return p
})

// StripThink removes leaked reasoning before an entry is stored, as
// nanobot's strip_think does: whole <think>/<thinking>/<thought> blocks, an
// unclosed block that starts the text, a malformed opening tag glued to the
// answer ("<think广场…"), and, only at the edges (so that prose about these
// tokens survives), orphan closing tags, Harmony-style <|channel|> markers
// and control tags cut by a stream chunk.
func StripThink(text string) string {
	re := thinkRE()
	for _, b := range re.blocks {
		text = b.ReplaceAllString(text, "")
	}
	text = re.unclosed.ReplaceAllString(text, "")
	text = re.selfClosingLead.ReplaceAllString(text, "")
	text = re.selfClosingTrail.ReplaceAllString(text, "")
	text = re.malformedOpen.ReplaceAllString(text, "$1")
	text = re.orphanCloseLead.ReplaceAllString(text, "")
	text = re.orphanCloseTrail.ReplaceAllString(text, "")
	text = re.channelLead.ReplaceAllString(text, "")
	text = re.partialTrail.ReplaceAllString(text, "")
	text = re.lonelyOpen.ReplaceAllString(text, "")
	return strings.TrimSpace(text)
}

// prepare applies nanobot's append_history order: strip trailing space, cap
// at limit characters, then strip leaked reasoning. A text that was only a
// leak is stored empty rather than raw.
func prepare(text string, limit int) string {
	if limit <= 0 {
		limit = EntryHardCap
	}
	raw := strings.TrimRightFunc(text, isPySpace)
	raw = Truncate(raw, limit)
	return StripThink(raw)
}

func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return r > 127 && strings.ContainsRune("\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000", r)
}
