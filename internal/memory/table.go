package memory

import (
	"bytes"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// gfmTable recognises GFM tables (https://github.github.com/gfm/#tables-extension-)
// and builds the same nodes as goldmark's own extension.Table, which this
// package used before: a Table of a TableHeader and TableRows of TableCells
// whose inline content goldmark parses as usual. The walker makes one unit
// of each row, with its cells' text as content and their links as pointers.
//
// It exists because importing goldmark/extension for Table alone links the
// whole package, and that package compiles its linkify and table regular
// expressions at program start: about a millisecond of every `dream`
// process, hooks included, for memories that are read far less often. The
// algorithm follows goldmark v1.8.7's extension/table.go step by step
// (delimiter row, header cell count, cell splitting on unescaped pipes, the
// escaped pipe inside a code span), with the delimiter's regular
// expressions written as byte loops and without the HTML renderer, which
// nothing here uses; TestTableMatchesGoldmarkExtension and FuzzTableParse
// compare the two parses unit for unit.
type gfmTable struct{}

// Extend adds the transformers at the priorities extension.Table uses, so
// that they run in the same order relative to goldmark's own.
func (gfmTable) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithParagraphTransformers(util.Prioritized(tableParagraphs{}, 200)),
		parser.WithASTTransformers(util.Prioritized(tableEscapedPipes{}, 0)),
	)
}

// escapedPipesKey holds, for one parse, the cells that have a `\|` after a
// backtick: a code span in them keeps the pipe but drops the backslash,
// which only the inline tree can settle (tableEscapedPipes).
var escapedPipesKey = parser.NewContextKey()

// escapedPipeCell is a cell and the source offsets of the backslashes of its
// escaped pipes.
type escapedPipeCell struct {
	cell        *east.TableCell
	pos         []int
	transformed bool
}

// tableParagraphs turns a paragraph whose second or later line is a
// delimiter row into the paragraph's lines before the header row (if any)
// and a table of the header row and every line after the delimiter.
type tableParagraphs struct{}

func (tableParagraphs) Transform(node *gast.Paragraph, reader text.Reader, pc parser.Context) {
	ppos := node.Pos()
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	for i := 1; i < lines.Len(); i++ {
		delim := lines.At(i)
		alignments := parseTableDelimiter(delim.Value(reader.Source()))
		if alignments == nil {
			continue
		}
		header := parseTableRow(lines.At(i-1), alignments, true, reader, pc)
		if header == nil || len(alignments) != header.ChildCount() {
			return
		}
		table := east.NewTable()
		table.Alignments = alignments
		table.SetPos(ppos)
		table.AppendChild(table, east.NewTableHeader(header))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, parseTableRow(lines.At(j), alignments, false, reader, pc))
		}
		node.Lines().SetSliced(0, i-1)
		node.Parent().InsertAfter(node.Parent(), node, table)
		if node.Lines().Len() == 0 {
			node.Parent().RemoveChild(node.Parent(), node)
		} else {
			last := node.Lines().At(i - 2)
			last.Stop-- // the paragraph's last line loses its newline
			node.Lines().Set(i-2, last)
		}
	}
}

// parseTableRow splits one line into cells. A body row has at most as many
// cells as the delimiter has columns (the rest of the line is dropped) and
// is padded with empty cells up to that number; a header row keeps all its
// cells so that the caller can refuse a header that does not match.
func parseTableRow(segment text.Segment, alignments []east.Alignment, isHeader bool, reader text.Reader, pc parser.Context) *east.TableRow {
	npos := segment
	source := reader.Source()
	segment = segment.TrimLeftSpace(source)
	segment = segment.TrimRightSpace(source)
	line := segment.Value(source)
	pos, limit := 0, len(line)
	row := east.NewTableRow(alignments)
	row.SetPos(npos.Start)
	if len(line) > 0 && line[pos] == '|' {
		pos++
	}
	if len(line) > 0 && line[limit-1] == '|' {
		limit--
	}
	i := 0
	for ; pos < limit; i++ {
		alignment := east.AlignNone
		if i >= len(alignments) {
			if !isHeader {
				return row
			}
		} else {
			alignment = alignments[i]
		}
		var escaped *escapedPipeCell
		cell := east.NewTableCell()
		cell.SetPos(npos.Start + pos - npos.Padding)
		cell.Alignment = alignment
		hasBacktick := false
		closure := pos
		for ; closure < limit; closure++ {
			if line[closure] == '`' {
				hasBacktick = true
			}
			if line[closure] != '|' {
				continue
			}
			if closure == 0 || line[closure-1] != '\\' {
				break
			}
			if hasBacktick {
				if escaped == nil {
					escaped = &escapedPipeCell{cell: cell}
					list, _ := pc.Get(escapedPipesKey).([]*escapedPipeCell)
					pc.Set(escapedPipesKey, append(list, escaped))
				}
				escaped.pos = append(escaped.pos, segment.Start+closure-1)
			}
		}
		seg := text.NewSegment(segment.Start+pos, segment.Start+closure)
		seg = seg.TrimLeftSpace(source)
		seg = seg.TrimRightSpace(source)
		cell.Lines().Append(seg)
		row.AppendChild(row, cell)
		pos = closure + 1
	}
	for ; i < len(alignments); i++ {
		row.AppendChild(row, east.NewTableCell())
	}
	return row
}

// isTableDelimiterLine is the first test of a delimiter row: indented at
// most three columns, only spaces, dashes, pipes and colons, and not dashes
// alone (that is a setext underline or a thematic break).
func isTableDelimiterLine(bs []byte) bool {
	if w, _ := util.IndentWidth(bs, 0); w > 3 {
		return false
	}
	allDashes := true
	for _, b := range bs {
		if b != '-' {
			allDashes = false
		}
		if !(util.IsSpace(b) || b == '-' || b == '|' || b == ':') {
			return false
		}
	}
	return !allDashes
}

// parseTableDelimiter is the alignment of each column of a delimiter row,
// or nil when line is not one.
func parseTableDelimiter(line []byte) []east.Alignment {
	if !isTableDelimiterLine(line) {
		return nil
	}
	cols := bytes.Split(line, []byte{'|'})
	if util.IsBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}
	var alignments []east.Alignment
	for _, col := range cols {
		a, ok := columnAlignment(col)
		if !ok {
			return nil
		}
		alignments = append(alignments, a)
	}
	return alignments
}

// columnAlignment reads one column of a delimiter row: optional white
// space, an optional colon, one or more dashes, an optional colon, optional
// white space (goldmark's four regular expressions, \s being RE2's
// [\t\n\f\r ]).
func columnAlignment(col []byte) (east.Alignment, bool) {
	i, n := 0, len(col)
	for i < n && isRE2Space(col[i]) {
		i++
	}
	for n > i && isRE2Space(col[n-1]) {
		n--
	}
	core := col[i:n]
	left := len(core) > 0 && core[0] == ':'
	if left {
		core = core[1:]
	}
	right := len(core) > 0 && core[len(core)-1] == ':'
	if right {
		core = core[:len(core)-1]
	}
	if len(core) == 0 || len(bytes.Trim(core, "-")) != 0 {
		return east.AlignNone, false
	}
	switch {
	case left && right:
		return east.AlignCenter, true
	case left:
		return east.AlignLeft, true
	case right:
		return east.AlignRight, true
	}
	return east.AlignNone, true
}

// isRE2Space is \s of Go's regexp syntax.
func isRE2Space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// tableEscapedPipes drops the backslash of `\|` inside the code spans of
// the cells parseTableRow noted, by splitting the span's text around it, as
// GFM asks (a pipe in a code span in a table must be escaped, and the
// escape is not part of the code).
type tableEscapedPipes struct{}

func (tableEscapedPipes) Transform(_ *gast.Document, _ text.Reader, pc parser.Context) {
	list, _ := pc.Get(escapedPipesKey).([]*escapedPipeCell)
	if list == nil {
		return
	}
	pc.Set(escapedPipesKey, nil)
	for _, v := range list {
		if v.transformed {
			continue
		}
		_ = gast.Walk(v.cell, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
			if !entering || n.Kind() != gast.KindCodeSpan {
				return gast.WalkContinue, nil
			}
			for c := n.FirstChild(); c != nil; {
				next := c.NextSibling()
				if c.Kind() != gast.KindText {
					c = next
					continue
				}
				parent := c.Parent()
				ts := &c.(*gast.Text).Segment
				cur := c
				// Every noted cell's offsets, as goldmark does: an offset
				// lies in one text segment only, whichever cell noted it.
				for _, w := range list {
					for _, p := range w.pos {
						if ts.Start <= p && p < ts.Stop {
							seg := cur.(*gast.Text).Segment
							n1 := gast.NewRawTextSegment(seg.WithStop(p))
							n2 := gast.NewRawTextSegment(seg.WithStart(p + 1))
							parent.InsertAfter(parent, cur, n1)
							parent.InsertAfter(parent, n1, n2)
							parent.RemoveChild(parent, cur)
							cur = n2
							w.transformed = true
						}
					}
				}
				c = next
			}
			return gast.WalkContinue, nil
		})
	}
}
