package lossguard

import (
	"strings"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// leaf is one text-bearing unit of a file, as the guard compares it.
type leaf struct {
	start, end int
	line       int
	// text is the unit's whole lines: a substring of the file's one string
	// conversion, so that a file costs one copy however many units it has.
	text string
	// kind and content are what norm is made of; norm is computed only for
	// the few units that left their file (a strict dream never needs it).
	kind    memory.UnitKind
	content string
	// path is the headings the unit stands under (from a whole parse).
	path []string
}

// leaves are the leaf units of src (its text, for substrings) in file order,
// parsed once by memory.ParseDoc, the parser every memory reader shares.
func leaves(src []byte) (string, []leaf) {
	s := string(src)
	return s, docLeaves(memory.ParseDoc(src), s)
}

// docLeaves are d's leaf units; s is d.Src as a string.
func docLeaves(d *memory.Doc, s string) []leaf {
	n := 0
	for i := range d.Units {
		if d.Units[i].Leaf {
			n++
		}
	}
	out := make([]leaf, 0, n)
	for i := range d.Units {
		u := &d.Units[i]
		if !u.Leaf || u.Kind == memory.UnitBreak {
			continue
		}
		text := s[u.Start:u.End]
		if isBlank(text) {
			continue
		}
		out = append(out, leaf{start: u.Start, end: u.End, line: d.LineOf(u.Start), text: text, kind: u.Kind, content: u.Content, path: u.Path})
	}
	return out
}

// isBlank is strings.TrimSpace(s) == "" without the trim.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !asciiSpace[c] {
			return strings.TrimSpace(s[i:]) == ""
		}
	}
	return true
}

// norm is the unit's text as survival compares it: its words, lowercased,
// single-spaced; for code, front matter and HTML its raw lines.
func (l leaf) norm() string {
	if l.kind == memory.UnitCode || l.kind == memory.UnitFrontmatter || l.kind == memory.UnitHTML {
		return normalize(l.text)
	}
	return normalize(l.content)
}

var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// normalize is strings.ToLower(strings.Join(strings.Fields(s), " ")) in one
// pass and one allocation for ASCII text; other text takes that path.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return strings.ToLower(strings.Join(strings.Fields(s), " "))
		}
		if asciiSpace[c] {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
