package offline

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/dreamkit/dream/internal/memory"
)

// fixDuplicates removes a repeated unordered list item or paragraph when the
// first copy is in the same file, under the same heading path and the same
// parent, and the repeat has nothing attached to it.
//
// What is never a duplicate, by construction: a numbered step (step 4 "run
// the checks again" is not step 1, and a hotfix procedure needs its own
// steps), an item with nested content (removing it would take the content
// along or re-parent it), a unit that introduces what follows (ends with a
// colon: the code block under it would be orphaned), anything quoted, a
// pinned line, and a line under another heading or another bold label.
// Copies in other files are leads, not edits: the same words in two
// projects are two facts.
func (s *state) fixDuplicatesIn(f *file) {
	if !s.roles.mayEdit(f.rel) {
		return
	}
	d := f.doc
	blocks := s.roles.blocks(f)
	if blocks.refused {
		return
	}
	first := map[string]int{}
	var rs []removal
	for i, u := range d.Units {
		if blocks.inHeader(u.Start, u.End) {
			continue
		}
		key, ok := dupKey(d, u, func() string { return f.norm(i) })
		if !ok {
			continue
		}
		if blocks.spans != nil {
			// A Codex block is one rollout's memory: the same bullet in two
			// blocks is two rollouts saying it, not a repeat.
			key = fmt.Sprint(blocks.of(u.Start)) + "\x00" + key
		}
		k, seen := first[key]
		if !seen {
			first[key] = i
			continue
		}
		start, end := removalRange(d, u)
		if d.PinnedRange(start, end) || f.touched(start, end) {
			continue
		}
		kept := d.Units[k]
		rs = append(rs, removal{start, end, KindDuplicate, fmt.Sprintf("removed %q: same as line %d under %s",
			clip(u.Content, 120), d.LineOf(kept.Start), pathLabel(u.Path))})
	}
	s.applyRemovals(f, rs)
}

// dupKey is the comparison key of a unit that may be removed as a
// duplicate, or false for a unit that may not; normed is normalize of its
// content, computed once per unit for every pass that needs it.
func dupKey(d *memory.Doc, u memory.Unit, normed func() string) (string, bool) {
	switch u.Kind {
	case memory.UnitItem:
		if u.Ordered || u.Nested {
			return "", false
		}
	case memory.UnitParagraph:
		if u.Parent >= 0 || isBoldLabel(u.Content) {
			return "", false
		}
	default:
		return "", false
	}
	if u.Quoted || introduces(u.Content) || d.PinnedRange(u.Start, u.End) {
		return "", false
	}
	norm := normed()
	if !substantial(norm) {
		return "", false
	}
	// The Sprintf("%s\x00%d\x00%s\x00%s") it was, in one allocation.
	n := len(u.Kind) + 24 + len(norm)
	for _, p := range u.Path {
		n += len(p) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(string(u.Kind))
	b.WriteByte(0)
	var num [20]byte
	b.Write(strconv.AppendInt(num[:0], int64(u.Parent), 10))
	b.WriteByte(0)
	for i, p := range u.Path {
		if i > 0 {
			b.WriteByte(0x1f)
		}
		b.WriteString(p)
	}
	b.WriteByte(0)
	b.WriteString(norm)
	return b.String(), true
}

// removalRange is the unit's lines, plus one blank line that would
// otherwise be left doubled (a paragraph between two blank lines).
func removalRange(d *memory.Doc, u memory.Unit) (int, int) {
	start, end := u.Start, u.End
	if u.Kind != memory.UnitParagraph {
		return start, end
	}
	blankBefore := start == d.BodyStart || start > 0 && isBlankLine(d, d.LineStart(start-1))
	if blankBefore && end < len(d.Src) && isBlankLine(d, end) {
		end = d.LineEnd(end)
	}
	return start, end
}

func isBlankLine(d *memory.Doc, off int) bool {
	return strings.TrimSpace(string(d.Src[d.LineStart(off):d.LineEnd(off)])) == ""
}

// introduces reports text that announces what follows it.
func introduces(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasSuffix(s, ":") || strings.HasSuffix(s, "：")
}

func isBoldLabel(s string) bool {
	return strings.HasPrefix(s, "**") && strings.HasSuffix(strings.TrimSuffix(s, ":"), "**")
}

// normalize is the key under which two units are exact duplicates: case,
// runs of whitespace, emphasis markers and final punctuation are ignored,
// and nothing else ("a != b" stays unlike "a = b").
func normalize(s string) string {
	if isASCII(s) {
		return normalizeASCII(s)
	}
	s = emphasisMarks().Replace(strings.ToLower(s))
	var b strings.Builder
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, "*_")
		if w == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return strings.TrimRight(b.String(), ".,;!?。，；！？… ")
}

// normalizeASCII is normalize of an ASCII string in one pass and one
// allocation (most memory text is ASCII, and normalize runs on every unit):
// lower case, the emphasis pairs removed left to right as the Replacer
// does, words split on ASCII white space, "*" and "_" trimmed from each,
// joined by one space, final punctuation cut.
func normalizeASCII(s string) string {
	out := make([]byte, 0, len(s))
	word := -1 // where the current word starts in out, or -1
	endWord := func() {
		if word < 0 {
			return
		}
		w := out[word:]
		a, b := 0, len(w)
		for a < b && (w[a] == '*' || w[a] == '_') {
			a++
		}
		for b > a && (w[b-1] == '*' || w[b-1] == '_') {
			b--
		}
		if a == b {
			out = out[:word]
			if len(out) > 0 {
				out = out[:len(out)-1] // the space before the empty word
			}
		} else {
			n := copy(out[word:], w[a:b])
			out = out[:word+n]
		}
		word = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if (c == '*' || c == '_' || c == '~') && i+1 < len(s) && s[i+1] == c {
			i++ // an emphasis pair: gone, and it does not split a word
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			endWord()
			continue
		}
		if word < 0 {
			if len(out) > 0 {
				out = append(out, ' ')
			}
			word = len(out)
		}
		out = append(out, c)
	}
	endWord()
	return strings.TrimRight(string(out), ".,;!?。，；！？… ")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// emphasisMarks strips emphasis markers; built once, on first use.
var emphasisMarks = sync.OnceValue(func() *strings.Replacer { return strings.NewReplacer("**", "", "__", "", "~~", "") })

// substantial reports whether a normalised unit says enough to be removed as
// a duplicate: "- none" under two headings is layout, not a fact.
//
// It is three or more words (as strings.Fields splits them), sixteen or
// more characters, or six or more ideographs, counted in one pass with
// nothing allocated: it runs on every list item and paragraph.
func substantial(norm string) bool {
	words, runes, cjk := 0, 0, 0
	inWord := false
	for _, r := range norm {
		runes++
		if unicode.IsSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			words++
		}
		if memory.IsCJK(r) {
			cjk++
		}
		if words >= 3 || runes >= 16 || cjk >= 6 {
			return true
		}
	}
	return false
}

func pathLabel(p []string) string {
	if len(p) == 0 {
		return "the top of the file"
	}
	return `"` + strings.Join(p, " › ") + `"`
}

// collapseSpace turns every run of whitespace into one space and trims.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	s = collapseSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func hasIdeographs(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return false
	}
	for _, r := range s {
		if memory.IsCJK(r) {
			return true
		}
	}
	return false
}
