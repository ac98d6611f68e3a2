package lossguard

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// A dream usually changes a few sections of a file and leaves the others
// byte for byte: the comparison needs the texts of every unit the file has
// afterwards, but only the sections the dream touched need parsing for
// that. The rest is the before side's own parse, which the guard has
// anyway.
//
// Why that is exact. A section starts at a line that is an ATX heading at
// the top level ("## Deploy" in column 0, which CommonMark's block parser
// reads line by line) or a top-level bullet item ("- [API](api.md) ...",
// see isBulletLine): whatever was open before that line (a paragraph, a
// quote, indented code, a list item) is closed by it, unless it is a
// fenced code block or an HTML block, in which the line is content.
// Nothing such a line is, or what follows it, changes how the lines before
// it were read (neither is a setext underline). So:
//
//   - the units of a section that starts at a verified boundary (the
//     before side's parse says a top-level heading or bullet item starts
//     there) and ends at the next one are the same wherever that section's
//     bytes stand after a boundary of their own: a section of the file
//     afterwards with the same bytes has the same units, provided the line
//     after it is a boundary line too (the state it leaves closes on any
//     boundary line, since it closed on one before) or the end of the file;
//   - the sections the dream changed are parsed as a run, together with the
//     line that follows the run, and that line must come out as a
//     top-level heading or bullet item with nothing of the run reaching
//     into it, which proves the run leaves nothing open; if it does not,
//     the whole file is parsed, as it would have been.
//
// Link reference definitions reach across sections, but they change what
// a unit's content says, never where a unit starts or ends, and texts are
// whole lines; front matter is handled by starting every run that begins
// at the top of the file there. The fuzz target FuzzAfterTexts holds this
// to the full parse.

// afterTexts are the texts of the leaf units of after, in order, given the
// parse of the file before (d, its text s and its leaves ls).
func afterTexts(d *memory.Doc, s string, ls []leaf, after []byte) []string {
	if texts, ok := sectionTexts(d, s, ls, after); ok {
		return texts
	}
	return parsedTexts(after)
}

// parsedTexts are the texts of the leaf units of src, parsed whole (its
// blocks: a text is its unit's bytes).
func parsedTexts(src []byte) []string {
	ls := docLeaves(memory.ParseBlocks(src), string(src))
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return out
}

// section is a run of the file before between two verified headings.
type section struct {
	start, end int
	// closed: a verified heading follows (not the end of the file).
	closed bool
	// first and last index the section's units in ls.
	first, last int
}

func sectionTexts(d *memory.Doc, s string, ls []leaf, after []byte) ([]string, bool) {
	secs := sections(d, s, ls)
	if len(secs) < 2 {
		return nil, false
	}
	// Kept sections by their heading line; the first section (the top of
	// the file, front matter and all) is matched only at the top.
	byLine := make(map[string][]int, len(secs))
	for k := 1; k < len(secs); k++ {
		line := s[secs[k].start:lineEnd(s, secs[k].start)]
		byLine[line] = append(byLine[line], k)
	}
	as := string(after)
	// match is the section kept at p, or -1. p is a line start whose state
	// closes on a heading line (the top of the file, or a verified
	// boundary).
	match := func(p int) int {
		var cands []int
		if p == 0 {
			cands = []int{0}
		} else if isBoundaryLine(as, p) {
			cands = byLine[as[p:lineEnd(as, p)]]
		}
		if len(cands) > maxCandidates {
			cands = cands[:maxCandidates] // a line said many times: enough tries
		}
		for _, k := range cands {
			sec := secs[k]
			e := p + sec.end - sec.start
			if e > len(as) || as[p:e] != s[sec.start:sec.end] {
				continue
			}
			if e == len(as) || sec.closed && isBoundaryLine(as, e) {
				return k
			}
		}
		return -1
	}
	out := make([]string, 0, len(ls)+8)
	for p := 0; p < len(as); {
		if k := match(p); k >= 0 {
			sec := secs[k]
			for i := sec.first; i < sec.last; i++ {
				out = append(out, ls[i].text)
			}
			p += sec.end - sec.start
			continue
		}
		// A run of changed sections, up to the next kept one.
		q := nextBoundaryLine(as, p+1)
		for q < len(as) && match(q) < 0 {
			q = nextBoundaryLine(as, q+1)
		}
		if q >= len(as) {
			if p == 0 {
				return nil, false // nothing kept: the file is parsed whole
			}
			for _, l := range docLeaves(memory.ParseBlocks(after[p:]), as[p:]) {
				out = append(out, l.text)
			}
			break
		}
		texts, ok := runTexts(after, as, p, q)
		if !ok {
			return nil, false
		}
		out = append(out, texts...)
		p = q
	}
	return out, true
}

// runTexts parses src[p:q] together with the boundary line at q, and
// returns the texts of the run's units when that line opens a top-level
// heading or bullet item that nothing of the run reaches into. s is src as
// a string.
func runTexts(src []byte, s string, p, q int) ([]string, bool) {
	chunk := src[p:lineEnd(s, q)]
	d := memory.ParseBlocks(chunk)
	h := q - p
	if p == 0 && mayOpenFrontmatter(chunk) && (len(d.Units) == 0 || d.Units[0].Kind != memory.UnitFrontmatter) {
		// The run may end inside front matter that closes further down.
		return nil, false
	}
	// The line at h must open a top-level heading, or a top-level bullet
	// item (with its first paragraph inside it), and end the chunk.
	opened := -1
	for i, u := range d.Units {
		switch {
		case u.Start == h && opened < 0:
			if u.Parent != -1 || u.Quoted || u.End != len(chunk) ||
				!(u.Kind == memory.UnitHeading || u.Kind == memory.UnitItem && !u.Ordered) {
				return nil, false
			}
			opened = i
		case u.Start == h:
			if u.Parent != opened || u.End > len(chunk) {
				return nil, false
			}
		case u.Start > h || u.End > h:
			return nil, false
		}
	}
	if opened < 0 {
		return nil, false
	}
	var out []string
	for _, l := range docLeaves(d, s[p:p+len(chunk)]) {
		if l.start < h {
			out = append(out, l.text)
		}
	}
	return out, true
}

// sections splits the file before at its verified headings: top-level
// ATX headings in column 0 that no unit reaches across.
func sections(d *memory.Doc, s string, ls []leaf) []section {
	var cuts []int
	for _, u := range d.Units {
		if u.Parent != -1 || u.Quoted || u.Start == 0 {
			continue
		}
		if u.Kind == memory.UnitHeading && isHeadingLine(s, u.Start) || u.Kind == memory.UnitItem && !u.Ordered && isBulletLine(s, u.Start) {
			cuts = append(cuts, u.Start)
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	// A cut inside any unit (one reaching over the heading line) is no
	// boundary.
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	inside := make([]bool, len(cuts))
	for _, u := range d.Units {
		i, _ := slices.BinarySearch(cuts, u.Start+1)
		for ; i < len(cuts) && cuts[i] < u.End; i++ {
			inside[i] = true
		}
	}
	ok := cuts[:0]
	for i, c := range cuts {
		if !inside[i] {
			ok = append(ok, c)
		}
	}
	secs := make([]section, 0, len(ok)+1)
	start, i := 0, 0
	for k := 0; k <= len(ok); k++ {
		end, closed := len(s), false
		if k < len(ok) {
			end, closed = ok[k], true
		}
		first := i
		for i < len(ls) && ls[i].start < end {
			i++
		}
		secs = append(secs, section{start: start, end: end, closed: closed, first: first, last: i})
		start = end
	}
	return secs
}

// isHeadingLine reports whether s has, at line start p, an ATX heading
// line in column 0 with a title: one to six '#', a space or tab, and some
// text on the line. Any such line is a heading wherever a heading may
// stand (goldmark's ATX parser, parser/atx_heading.go).
func isHeadingLine(s string, p int) bool {
	if p >= len(s) || p > 0 && s[p-1] != '\n' {
		return false
	}
	i := p
	for i < len(s) && i-p < 7 && s[i] == '#' {
		i++
	}
	if n := i - p; n == 0 || n > 6 || i >= len(s) || s[i] != ' ' && s[i] != '\t' {
		return false
	}
	for ; i < len(s) && s[i] != '\n'; i++ {
		if c := s[i]; c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f' {
			return true
		}
	}
	return false
}

// maxCandidates bounds the kept sections tried at one line.
const maxCandidates = 8

// isBoundaryLine reports whether the line at p may start a section.
func isBoundaryLine(s string, p int) bool { return isHeadingLine(s, p) || isBulletLine(s, p) }

// isBulletLine reports whether s has, at line start p, a bullet list item
// in column 0 whose text starts with a letter, a digit, a bracket, a quote
// or any non-ASCII character: "- [API](api.md) — ...", "- 部署前...". Such
// a line is a list item wherever one may stand: it may interrupt a
// paragraph (it is not empty, and a bullet needs no start number), it is
// no lazy continuation of one, it closes a quote, indented code and any
// list item (column 0 is no item's content), and it is neither a thematic
// break ("- - -") nor a setext underline ("---").
func isBulletLine(s string, p int) bool {
	if p+2 >= len(s) || p > 0 && s[p-1] != '\n' {
		return false
	}
	if c := s[p]; c != '-' && c != '*' && c != '+' || s[p+1] != ' ' {
		return false
	}
	c := s[p+2]
	return c >= utf8.RuneSelf || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '[' || c == '(' || c == '"' || c == '\''
}

// nextBoundaryLine is the offset of the first boundary line at or after
// p, or len(s).
func nextBoundaryLine(s string, p int) int {
	for p < len(s) {
		if isBoundaryLine(s, p) {
			return p
		}
		nl := strings.IndexByte(s[p:], '\n')
		if nl < 0 {
			return len(s)
		}
		p += nl + 1
	}
	return len(s)
}

// lineEnd is the offset just past the line ending of the line at p.
func lineEnd(s string, p int) int {
	if nl := strings.IndexByte(s[p:], '\n'); nl >= 0 {
		return p + nl + 1
	}
	return len(s)
}

// mayOpenFrontmatter reports whether the first line of src (after a byte
// order mark) could open front matter: punctuation only, as "---" is. It
// is deliberately wider than memory's rule, so that a change there cannot
// make the shortcut wrong.
func mayOpenFrontmatter(src []byte) bool {
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		src = src[3:]
	}
	seen := false
	for _, c := range src {
		switch c {
		case '\n':
			return seen
		case '-', '+', '.', '=', '~', '*', '_', ';', ':', ' ', '\t', '\r':
			seen = seen || c != ' ' && c != '\t' && c != '\r'
		default:
			return false
		}
	}
	return seen
}
