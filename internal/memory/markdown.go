package memory

import (
	"bytes"
	"strings"
	"sync"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// A memory file is read as CommonMark (with GitHub tables), not line by
// line: a continuation line belongs to its list item, a code block to the
// instruction above it only if it is nested in it, and "# not a heading"
// inside a fence is code. Everything the offline engine and the loss guard
// decide is decided on these units, and every edit is a splice of the
// original bytes, so the parser only ever reads.

// UnitKind names what a Unit is.
type UnitKind string

// Unit kinds.
const (
	UnitFrontmatter UnitKind = "frontmatter"
	UnitHeading     UnitKind = "heading"
	UnitParagraph   UnitKind = "paragraph"
	UnitItem        UnitKind = "item"
	UnitCode        UnitKind = "code"
	UnitQuote       UnitKind = "blockquote"
	UnitTableRow    UnitKind = "table_row"
	UnitHTML        UnitKind = "html"
	UnitBreak       UnitKind = "thematic_break"
)

// Unit is one addressable block of a memory file.
type Unit struct {
	Kind UnitKind
	// Start and End are the byte range of the unit's whole lines in the
	// source: from the start of its first line to just past the line
	// ending of its last (or the end of the file).
	Start, End int
	// Path is the heading path: the text of every ancestor heading, outermost
	// first, bold-label pseudo-headings ("**Production**" alone on a line)
	// included, so that "Setup" under Billing and under Catalog differ.
	Path []string
	// Parent is the index in Doc.Units of the enclosing item or blockquote,
	// or -1 at the top level.
	Parent int
	// Ordered is set on an item of a numbered list: a step of a procedure.
	Ordered bool
	// Nested is set on an item whose content is more than one paragraph
	// (a nested list, a code block, a second paragraph): removing it would
	// take those along.
	Nested bool
	// Leaf is set on units that hold text directly (paragraphs, headings,
	// code, table rows, html, frontmatter); items and quotes are containers.
	Leaf bool
	// Quoted is set inside a blockquote.
	Quoted bool
	// Content is the unit's text without list markers, quote markers or
	// indentation: for a paragraph its lines, for an item its first
	// paragraph, for a heading its title.
	Content string
}

// Span is a byte range of a file.
type Span struct{ Start, End int }

// Link is a link destination written in a file, with where it was written.
type Link struct {
	Dest string
	Span Span
}

// Doc is a parsed memory file.
type Doc struct {
	Src   []byte
	Units []Unit
	// BodyStart is the first byte after the frontmatter (and the BOM).
	BodyStart int
	// Prose are the ranges of plain text inside paragraphs that are not in
	// a blockquote or a table: outside code spans, links, autolinks, images
	// and raw HTML. Only there may words be read as dates.
	Prose []ProseRun
	// Links are every link and autolink destination outside code.
	Links []Link
	// CodeSpans are the contents of inline code spans, e.g. `notes.md`.
	CodeSpans []string
	// Comments are HTML comments outside code: the text of each.
	Comments []string
	// Pins are the lines carrying a pin marker outside code, as spans of
	// the marker itself.
	Pins       []Span
	lineStarts []int
}

// ProseRun is a run of plain text and the unit (paragraph) it belongs to.
type ProseRun struct {
	Span
	Unit int
}

// markdown is the shared parser, built on first use: nothing is compiled at
// package init, so a program that never reads Markdown pays nothing.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(gfmTable{}), goldmark.WithParserOptions(parser.WithAttribute()))
})

// blockMarkdown is markdown without inline parsers: the same blocks (the
// same block parsers, paragraph transformers, tables and attributes), with
// each paragraph's text left as plain lines.
var blockMarkdown = sync.OnceValue(func() goldmark.Markdown {
	p := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithAttribute(),
	)
	return goldmark.New(goldmark.WithParser(p), goldmark.WithExtensions(gfmTable{}))
})

// ParseBlocks is ParseDoc for a reader of block structure only: its Units
// have ParseDoc's Kind, Start, End, Parent, Leaf, Ordered, Nested and
// Quoted (FuzzParseBlocksMatchesParseDoc holds the two to that), and
// BodyStart is the same; but no inline Markdown is parsed, so Content and
// Path are empty and Prose, Links, CodeSpans, Comments and Pins are nil.
// That is most of a parse's cost for a reader, such as the loss guard,
// that compares units by their bytes.
func ParseBlocks(src []byte) *Doc { return parse(blockMarkdown(), src, true) }

// PinMarker is the HTML comment that pins a line.
const pinMarkerWord = "pin"

// ParseDoc parses a memory file. It never fails: any bytes are Markdown.
func ParseDoc(src []byte) *Doc { return parseDocWith(markdown(), src) }

// parseDocWith is ParseDoc with the goldmark instance given, so that a test
// can compare the units of two parsers (see table.go).
func parseDocWith(md goldmark.Markdown, src []byte) *Doc { return parse(md, src, false) }

// parse is ParseDoc, or with blocksOnly ParseBlocks.
func parse(md goldmark.Markdown, src []byte, blocksOnly bool) *Doc {
	d := &Doc{Src: src}
	d.lineStarts = lineStarts(src)
	// The frontmatter and a BOM are not Markdown; blank them (same length,
	// newlines kept) so that goldmark's offsets stay offsets into src.
	work := src
	body := 0
	if bytes.HasPrefix(src, bom) {
		body = len(bom)
	}
	if end, ok := frontmatterEnd(src[body:]); ok {
		d.Units = append(d.Units, Unit{Kind: UnitFrontmatter, Start: 0, End: body + end, Parent: -1, Leaf: true,
			Content: string(src[body : body+end])})
		body += end
	}
	d.BodyStart = body
	if body > 0 {
		work = append([]byte(nil), src...)
		for i := 0; i < body; i++ {
			if work[i] != '\n' && work[i] != '\r' {
				work[i] = ' '
			}
		}
	}
	root := md.Parser().Parse(text.NewReader(work))
	w := walker{d: d, src: work, blocksOnly: blocksOnly}
	// One unit per block node at most (a list, a table and the document
	// make none): sized once instead of grown unit by unit.
	var n int
	n, w.paragraphs = blockNodes(root)
	if n > 0 {
		units := make([]Unit, len(d.Units), len(d.Units)+n)
		copy(units, d.Units)
		d.Units = units
	}
	w.blocks(root, -1, false)
	if len(d.Units) == 0 {
		d.Units = nil // as when nothing was added
	}
	return d
}

// blockNodes counts the block nodes under n, and the paragraphs among them.
func blockNodes(n ast.Node) (blocks, paragraphs int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() == ast.TypeBlock {
			b, p := blockNodes(c)
			blocks += 1 + b
			paragraphs += p
			if k := c.Kind(); k == ast.KindParagraph || k == ast.KindTextBlock {
				paragraphs++
			}
		}
	}
	return blocks, paragraphs
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// frontmatterEnd finds a YAML frontmatter block at the start of b and
// returns the offset just past its closing "---" line.
func frontmatterEnd(b []byte) (int, bool) {
	first, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || strings.TrimRight(string(first), "\r ") != "---" {
		return 0, false
	}
	off := len(first) + 1
	for len(rest) > 0 {
		line, next, found := bytes.Cut(rest, []byte("\n"))
		off += len(line)
		if found {
			off++
		}
		if t := strings.TrimRight(string(line), "\r "); t == "---" || t == "..." {
			return off, true
		}
		rest = next
	}
	return 0, false
}

func lineStarts(b []byte) []int {
	starts := make([]int, 1, 1+bytes.Count(b, []byte{'\n'}))
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 || i+j+1 >= len(b) {
			return starts
		}
		i += j + 1
		starts = append(starts, i)
	}
}

// LineOf is the 1-based line number of byte offset off.
func (d *Doc) LineOf(off int) int {
	lo, hi := 0, len(d.lineStarts)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if d.lineStarts[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// LineStart is the offset of the start of the line holding off.
func (d *Doc) LineStart(off int) int { return d.lineStarts[d.LineOf(off)-1] }

// LineEnd is the offset just past the line ending of the line holding off.
func (d *Doc) LineEnd(off int) int {
	n := d.LineOf(off)
	if n < len(d.lineStarts) {
		return d.lineStarts[n]
	}
	return len(d.Src)
}

// Text is the unit's bytes.
func (d *Doc) Text(u Unit) string { return string(d.Src[u.Start:u.End]) }

// PinnedLine reports whether the line holding off carries a pin marker.
func (d *Doc) PinnedLine(off int) bool {
	ls, le := d.LineStart(off), d.LineEnd(off)
	for _, p := range d.Pins {
		if p.Start >= ls && p.Start < le {
			return true
		}
	}
	return false
}

// PinnedRange reports whether any line of [start, end) is pinned.
func (d *Doc) PinnedRange(start, end int) bool {
	for _, p := range d.Pins {
		if p.Start >= start && p.Start < end {
			return true
		}
	}
	return false
}

// walker turns goldmark's tree into Units.
type walker struct {
	d   *Doc
	src []byte
	// headings is the current heading path by level 1–6; label is the
	// bold-label pseudo-heading under the deepest heading, if any.
	headings [7]string
	label    string
	// cur is path() as of the last change of headings or label, shared by
	// every unit under them (capped, so that an append to one unit's Path
	// never writes into another's); stale marks it out of date.
	cur   []string
	stale bool
	// buf is inlineText's scratch space; last and lastText its last
	// result (an item's text is its first paragraph's, asked for twice).
	buf      []byte
	last     ast.Node
	lastText string
	// paragraphs sizes Doc.Prose when its first run is added.
	paragraphs int
	// blocksOnly skips every unit's text and the inline fields (ParseBlocks).
	blocksOnly bool
}

// setHeading and setLabel change the heading path.
func (w *walker) setHeading(level int, title string) { w.headings[level], w.stale = title, true }
func (w *walker) setLabel(label string)              { w.label, w.stale = label, true }

func (w *walker) path() []string {
	if !w.stale {
		return w.cur
	}
	var p []string
	for _, h := range w.headings[1:] {
		if h != "" {
			p = append(p, h)
		}
	}
	if w.label != "" {
		p = append(p, w.label)
	}
	w.cur, w.stale = p[:len(p):len(p)], false
	return w.cur
}

func (w *walker) add(u Unit) int {
	u.Path = w.path()
	w.d.Units = append(w.d.Units, u)
	return len(w.d.Units) - 1
}

// span is the whole-line byte range of a block node.
func (w *walker) span(n ast.Node) (int, int) {
	start, end := n.Pos(), n.Pos()
	w.extend(n, &start, &end)
	if start < 0 {
		start = 0
	}
	if end > start && end <= len(w.src) && (w.src[end-1] == '\n') {
		end-- // a segment that includes its newline: stay on that line
	}
	return w.d.LineStart(min(start, len(w.src))), w.d.LineEnd(min(end, max(len(w.src)-1, 0)))
}

// extend widens [start, end) to the lines of block node m and of the
// blocks and text under it.
func (w *walker) extend(m ast.Node, start, end *int) {
	if m.Type() == ast.TypeBlock {
		if p := m.Pos(); p >= 0 && p > *end {
			*end = p
		}
		ls := m.Lines()
		for i := 0; i < ls.Len(); i++ {
			s := ls.At(i)
			if s.Start < *start && s.Start >= 0 {
				*start = s.Start
			}
			if s.Stop > *end {
				*end = s.Stop
			}
		}
		if m.Kind() == ast.KindFencedCodeBlock {
			if c := w.closingFence(m); c > *end {
				*end = c
			}
		}
	}
	for c := m.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() == ast.TypeBlock {
			w.extend(c, start, end)
		} else if t, ok := c.(*ast.Text); ok && t.Segment.Stop > *end {
			*end = t.Segment.Stop
		}
	}
}

// closingFence is the offset of the closing fence line of a fenced block,
// or -1 when the block runs to the end of its container.
func (w *walker) closingFence(n ast.Node) int {
	open := w.d.LineStart(n.Pos())
	openLine := strings.TrimLeft(string(w.src[open:w.d.LineEnd(open)]), " \t>")
	run := fenceRun(openLine)
	if run == "" {
		return -1
	}
	from := w.d.LineEnd(open)
	if ls := n.Lines(); ls.Len() > 0 {
		from = w.d.LineEnd(ls.At(ls.Len() - 1).Start)
	}
	if from >= len(w.src) {
		return -1
	}
	l := strings.TrimRight(strings.TrimLeft(string(w.src[from:w.d.LineEnd(from)]), " \t>"), " \t\r\n")
	if r := fenceRun(l); len(r) >= len(run) && r[0] == run[0] && len(l) == len(r) {
		return from + 1 // inside the closing line
	}
	return -1
}

// fenceRun is the run of three or more backticks or tildes that opens t, or "".
func fenceRun(t string) string {
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	return t[:n]
}

func (w *walker) blocks(parent ast.Node, parentUnit int, quoted bool) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		w.block(n, parentUnit, quoted)
	}
}

func (w *walker) block(n ast.Node, parentUnit int, quoted bool) {
	start, end := w.span(n)
	switch v := n.(type) {
	case *ast.Heading:
		title := w.text(n)
		if parentUnit < 0 {
			for l := v.Level; l < len(w.headings); l++ {
				w.setHeading(l, "")
			}
			w.setLabel("")
			w.add(Unit{Kind: UnitHeading, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: title})
			w.setHeading(v.Level, title)
			return
		}
		w.add(Unit{Kind: UnitHeading, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: title})
	case *ast.Paragraph, *ast.TextBlock:
		if w.blocksOnly {
			w.add(Unit{Kind: UnitParagraph, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted})
			return
		}
		content := w.inlineText(n)
		if label, ok := w.boldLabel(n); ok && parentUnit < 0 {
			w.setLabel(label)
		}
		i := w.add(Unit{Kind: UnitParagraph, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: content})
		w.inlines(n, i, quoted)
	case *ast.List:
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			is, ie := w.span(it)
			nested := it.ChildCount() > 1
			content := ""
			if fc := it.FirstChild(); fc != nil && (fc.Kind() == ast.KindParagraph || fc.Kind() == ast.KindTextBlock) {
				content = w.text(fc)
			} else if fc != nil {
				nested = true
			}
			i := w.add(Unit{Kind: UnitItem, Start: is, End: ie, Parent: parentUnit, Ordered: v.IsOrdered(), Nested: nested, Quoted: quoted, Content: content})
			w.blocks(it, i, quoted)
		}
	case *ast.Blockquote:
		i := w.add(Unit{Kind: UnitQuote, Start: start, End: end, Parent: parentUnit, Quoted: true, Content: w.raw(start, end, true)})
		w.blocks(n, i, true)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		w.add(Unit{Kind: UnitCode, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: w.raw(start, end, false)})
	case *ast.HTMLBlock:
		if v.HasClosure() {
			if c := v.ClosureLine; c.Stop > 0 {
				end = w.d.LineEnd(max(c.Stop-1, c.Start))
			}
		}
		raw := w.raw(start, end, false)
		w.add(Unit{Kind: UnitHTML, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: raw})
		if !w.blocksOnly {
			w.htmlComments(raw, start)
		}
	case *ast.ThematicBreak:
		w.add(Unit{Kind: UnitBreak, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted})
	case *east.Table:
		for r := n.FirstChild(); r != nil; r = r.NextSibling() {
			rs := w.d.LineStart(r.Pos())
			re := w.d.LineEnd(r.Pos())
			if w.blocksOnly {
				w.add(Unit{Kind: UnitTableRow, Start: rs, End: re, Parent: parentUnit, Leaf: true, Quoted: quoted})
				continue
			}
			cells := make([]string, 0, r.ChildCount())
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				cells = append(cells, w.inlineText(c))
			}
			w.add(Unit{Kind: UnitTableRow, Start: rs, End: re, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: strings.Join(cells, " | ")})
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				w.linksOnly(c)
			}
		}
	default:
		if n.HasChildren() {
			w.blocks(n, parentUnit, quoted)
		}
	}
}

// boldLabel reports a paragraph that is one strong-emphasis span, optionally
// followed by a colon: "**Production**" heads what follows like a heading.
func (w *walker) boldLabel(n ast.Node) (string, bool) {
	e, ok := n.FirstChild().(*ast.Emphasis)
	if !ok || e.Level != 2 {
		return "", false
	}
	if rest := e.NextSibling(); rest != nil {
		t, ok := rest.(*ast.Text)
		if !ok || rest.NextSibling() != nil || strings.TrimSpace(string(t.Segment.Value(w.src))) != ":" {
			return "", false
		}
	}
	label := strings.TrimSuffix(w.inlineText(e), ":")
	return label, label != ""
}

// text is inlineText, or "" for ParseBlocks.
func (w *walker) text(n ast.Node) string {
	if w.blocksOnly {
		return ""
	}
	return w.inlineText(n)
}

// raw is the source of [start, end) as a unit's content (trimmed when
// trim is set), or "" for ParseBlocks.
func (w *walker) raw(start, end int, trim bool) string {
	if w.blocksOnly {
		return ""
	}
	if trim {
		return strings.TrimSpace(string(w.src[start:end]))
	}
	return string(w.src[start:end])
}

// inlineText is the plain text of a node's inline content, gathered in
// the walker's scratch buffer: one allocation, the string returned.
func (w *walker) inlineText(n ast.Node) string {
	if n == w.last {
		return w.lastText
	}
	w.buf = w.inlineInto(w.buf[:0], n)
	w.last, w.lastText = n, string(bytes.TrimSpace(w.buf))
	return w.lastText
}

func (w *walker) inlineInto(b []byte, m ast.Node) []byte {
	switch v := m.(type) {
	case *ast.Text:
		b = append(b, v.Segment.Value(w.src)...)
		if v.SoftLineBreak() || v.HardLineBreak() {
			b = append(b, ' ')
		}
		return b
	case *ast.String:
		return append(b, v.Value...)
	case *ast.CodeSpan:
		b = append(b, '`')
		for c := m.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b = append(b, t.Segment.Value(w.src)...)
			}
		}
		return append(b, '`')
	case *ast.AutoLink:
		return append(b, v.URL(w.src)...)
	case *ast.Link:
		// The destination is part of what a line says: two pointers
		// with the same words to different files are two facts.
		b = append(b, '[')
		for c := m.FirstChild(); c != nil; c = c.NextSibling() {
			b = w.inlineInto(b, c)
		}
		b = append(b, "]("...)
		b = append(b, v.Destination...)
		return append(b, ')')
	}
	for c := m.FirstChild(); c != nil; c = c.NextSibling() {
		b = w.inlineInto(b, c)
	}
	return b
}

// inlines records prose runs, links, code spans, comments and pins of a
// paragraph.
func (w *walker) inlines(n ast.Node, unit int, quoted bool) {
	var visit func(m ast.Node, prose bool)
	visit = func(m ast.Node, prose bool) {
		for c := m.FirstChild(); c != nil; c = c.NextSibling() {
			switch v := c.(type) {
			case *ast.Text:
				if prose && !quoted {
					w.addProse(v.Segment.Start, v.Segment.Stop, unit)
				}
			case *ast.CodeSpan:
				var b strings.Builder
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if tt, ok := t.(*ast.Text); ok {
						b.Write(tt.Segment.Value(w.src))
					}
				}
				w.d.CodeSpans = append(w.d.CodeSpans, b.String())
			case *ast.Link:
				w.d.Links = append(w.d.Links, Link{Dest: string(v.Destination), Span: Span{c.Pos(), c.Pos()}})
				visit(c, false)
			case *ast.Image:
				visit(c, false)
			case *ast.AutoLink:
				w.d.Links = append(w.d.Links, Link{Dest: string(v.URL(w.src)), Span: Span{c.Pos(), c.Pos()}})
			case *ast.RawHTML:
				for i := 0; i < v.Segments.Len(); i++ {
					s := v.Segments.At(i)
					w.htmlComments(string(s.Value(w.src)), s.Start)
				}
			default:
				visit(c, prose)
			}
		}
	}
	visit(n, true)
}

// linksOnly records the links and code spans of a table cell (tables are
// structure, not prose: their words are never rewritten).
func (w *walker) linksOnly(n ast.Node) {
	ast.Walk(n, func(m ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := m.(type) {
		case *ast.Link:
			w.d.Links = append(w.d.Links, Link{Dest: string(v.Destination)})
		case *ast.AutoLink:
			w.d.Links = append(w.d.Links, Link{Dest: string(v.URL(w.src))})
		case *ast.CodeSpan:
			var b strings.Builder
			for t := m.FirstChild(); t != nil; t = t.NextSibling() {
				if tt, ok := t.(*ast.Text); ok {
					b.Write(tt.Segment.Value(w.src))
				}
			}
			w.d.CodeSpans = append(w.d.CodeSpans, b.String())
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

func (w *walker) addProse(start, stop, unit int) {
	if start >= stop {
		return
	}
	if k := len(w.d.Prose) - 1; k >= 0 && w.d.Prose[k].Unit == unit && w.d.Prose[k].End == start {
		w.d.Prose[k].End = stop
		return
	}
	if w.d.Prose == nil {
		w.d.Prose = make([]ProseRun, 0, max(w.paragraphs, 1))
	}
	w.d.Prose = append(w.d.Prose, ProseRun{Span: Span{start, stop}, Unit: unit})
}

// htmlComments records the comments of raw HTML at offset off, and the pin
// markers among them.
func (w *walker) htmlComments(raw string, off int) {
	for i := 0; ; {
		j := strings.Index(raw[i:], "<!--")
		if j < 0 {
			return
		}
		j += i
		k := strings.Index(raw[j+4:], "-->")
		if k < 0 {
			return
		}
		body := raw[j+4 : j+4+k]
		w.d.Comments = append(w.d.Comments, body)
		if strings.EqualFold(strings.TrimSpace(body), pinMarkerWord) {
			w.d.Pins = append(w.d.Pins, Span{off + j, off + j + 4 + k + 3})
		}
		i = j + 4 + k + 3
	}
}

// IsCJK reports whether r is a Han, kana or Hangul character.
func IsCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo, the first of the four scripts' ranges
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
