package memory

// The walker as it was before its allocations were cut (issue 15), kept
// verbatim as the reference the current one must match unit for unit:
// FuzzWalkerMatchesReference and TestWalkerMatchesReference hold every
// Doc field of ParseDoc to this one's.

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// refParseDoc is ParseDoc through the reference walker.
func refParseDoc(src []byte) *Doc { return refParseDocWith(markdown(), src) }

func refParseDocWith(md goldmark.Markdown, src []byte) *Doc {
	d := &Doc{Src: src}
	d.lineStarts = refLineStarts(src)
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
	w := refWalker{d: d, src: work}
	w.blocks(root, -1, false)
	return d
}

func refLineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' && i+1 < len(b) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// refWalker turns goldmark's tree into Units.
type refWalker struct {
	d   *Doc
	src []byte
	// headings is the current heading path by level 1–6; label is the
	// bold-label pseudo-heading under the deepest heading, if any.
	headings [7]string
	label    string
}

func (w *refWalker) path() []string {
	var p []string
	for _, h := range w.headings[1:] {
		if h != "" {
			p = append(p, h)
		}
	}
	if w.label != "" {
		p = append(p, w.label)
	}
	return p
}

func (w *refWalker) add(u Unit) int {
	u.Path = w.path()
	w.d.Units = append(w.d.Units, u)
	return len(w.d.Units) - 1
}

// span is the whole-line byte range of a block node.
func (w *refWalker) span(n ast.Node) (int, int) {
	start, end := n.Pos(), n.Pos()
	var visit func(ast.Node)
	visit = func(m ast.Node) {
		if m.Type() == ast.TypeBlock {
			if p := m.Pos(); p >= 0 && p > end {
				end = p
			}
			ls := m.Lines()
			for i := 0; i < ls.Len(); i++ {
				s := ls.At(i)
				if s.Start < start && s.Start >= 0 {
					start = s.Start
				}
				if s.Stop > end {
					end = s.Stop
				}
			}
			if m.Kind() == ast.KindFencedCodeBlock {
				if c := w.closingFence(m); c > end {
					end = c
				}
			}
		}
		for c := m.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Type() == ast.TypeBlock {
				visit(c)
			} else if t, ok := c.(*ast.Text); ok && t.Segment.Stop > end {
				end = t.Segment.Stop
			}
		}
	}
	visit(n)
	if start < 0 {
		start = 0
	}
	if end > start && end <= len(w.src) && (w.src[end-1] == '\n') {
		end-- // a segment that includes its newline: stay on that line
	}
	return w.d.LineStart(min(start, len(w.src))), w.d.LineEnd(min(end, max(len(w.src)-1, 0)))
}

// closingFence is the offset of the closing fence line of a fenced block,
// or -1 when the block runs to the end of its container.
func (w *refWalker) closingFence(n ast.Node) int {
	open := w.d.LineStart(n.Pos())
	openLine := strings.TrimLeft(string(w.src[open:w.d.LineEnd(open)]), " \t>")
	run := refFenceRun(openLine)
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
	if r := refFenceRun(l); len(r) >= len(run) && r[0] == run[0] && len(l) == len(r) {
		return from + 1 // inside the closing line
	}
	return -1
}

// refFenceRun is the run of three or more backticks or tildes that opens t, or "".
func refFenceRun(t string) string {
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	return t[:n]
}

func (w *refWalker) blocks(parent ast.Node, parentUnit int, quoted bool) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		w.block(n, parentUnit, quoted)
	}
}

func (w *refWalker) block(n ast.Node, parentUnit int, quoted bool) {
	start, end := w.span(n)
	switch v := n.(type) {
	case *ast.Heading:
		title := w.inlineText(n)
		if parentUnit < 0 {
			for l := v.Level; l < len(w.headings); l++ {
				w.headings[l] = ""
			}
			w.label = ""
			w.add(Unit{Kind: UnitHeading, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: title})
			w.headings[v.Level] = title
			return
		}
		w.add(Unit{Kind: UnitHeading, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: title})
	case *ast.Paragraph, *ast.TextBlock:
		content := w.inlineText(n)
		if label, ok := w.boldLabel(n); ok && parentUnit < 0 {
			w.label = label
		}
		i := w.add(Unit{Kind: UnitParagraph, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: content})
		w.inlines(n, i, quoted)
	case *ast.List:
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			is, ie := w.span(it)
			nested := it.ChildCount() > 1
			content := ""
			if fc := it.FirstChild(); fc != nil && (fc.Kind() == ast.KindParagraph || fc.Kind() == ast.KindTextBlock) {
				content = w.inlineText(fc)
			} else if fc != nil {
				nested = true
			}
			i := w.add(Unit{Kind: UnitItem, Start: is, End: ie, Parent: parentUnit, Ordered: v.IsOrdered(), Nested: nested, Quoted: quoted, Content: content})
			w.blocks(it, i, quoted)
		}
	case *ast.Blockquote:
		i := w.add(Unit{Kind: UnitQuote, Start: start, End: end, Parent: parentUnit, Quoted: true, Content: strings.TrimSpace(string(w.src[start:end]))})
		w.blocks(n, i, true)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		w.add(Unit{Kind: UnitCode, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: string(w.src[start:end])})
	case *ast.HTMLBlock:
		if v.HasClosure() {
			if c := v.ClosureLine; c.Stop > 0 {
				end = w.d.LineEnd(max(c.Stop-1, c.Start))
			}
		}
		raw := string(w.src[start:end])
		w.add(Unit{Kind: UnitHTML, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted, Content: raw})
		w.htmlComments(raw, start)
	case *ast.ThematicBreak:
		w.add(Unit{Kind: UnitBreak, Start: start, End: end, Parent: parentUnit, Leaf: true, Quoted: quoted})
	case *east.Table:
		for r := n.FirstChild(); r != nil; r = r.NextSibling() {
			rs := w.d.LineStart(r.Pos())
			re := w.d.LineEnd(r.Pos())
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
func (w *refWalker) boldLabel(n ast.Node) (string, bool) {
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

// inlineText is the plain text of a node's inline content.
func (w *refWalker) inlineText(n ast.Node) string {
	var b strings.Builder
	var visit func(ast.Node)
	visit = func(m ast.Node) {
		switch v := m.(type) {
		case *ast.Text:
			b.Write(v.Segment.Value(w.src))
			if v.SoftLineBreak() || v.HardLineBreak() {
				b.WriteByte(' ')
			}
			return
		case *ast.String:
			b.Write(v.Value)
			return
		case *ast.CodeSpan:
			b.WriteByte('`')
			for c := m.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					b.Write(t.Segment.Value(w.src))
				}
			}
			b.WriteByte('`')
			return
		case *ast.AutoLink:
			b.Write(v.URL(w.src))
			return
		case *ast.Link:
			// The destination is part of what a line says: two pointers
			// with the same words to different files are two facts.
			b.WriteByte('[')
			for c := m.FirstChild(); c != nil; c = c.NextSibling() {
				visit(c)
			}
			b.WriteString("](")
			b.Write(v.Destination)
			b.WriteByte(')')
			return
		}
		for c := m.FirstChild(); c != nil; c = c.NextSibling() {
			visit(c)
		}
	}
	visit(n)
	return strings.TrimSpace(b.String())
}

// inlines records prose runs, links, code spans, comments and pins of a
// paragraph.
func (w *refWalker) inlines(n ast.Node, unit int, quoted bool) {
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
func (w *refWalker) linksOnly(n ast.Node) {
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

func (w *refWalker) addProse(start, stop, unit int) {
	if start >= stop {
		return
	}
	if k := len(w.d.Prose) - 1; k >= 0 && w.d.Prose[k].Unit == unit && w.d.Prose[k].End == start {
		w.d.Prose[k].End = stop
		return
	}
	w.d.Prose = append(w.d.Prose, ProseRun{Span: Span{start, stop}, Unit: unit})
}

// htmlComments records the comments of raw HTML at offset off, and the pin
// markers among them.
func (w *refWalker) htmlComments(raw string, off int) {
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
