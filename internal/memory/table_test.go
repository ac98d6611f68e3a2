package memory

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// extensionMarkdown is the parser ParseDoc used before gfmTable: goldmark's
// own extension.Table. Only tests link it, to compare the two.
var extensionMarkdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithParserOptions(parser.WithAttribute()))
})

// treeOf is a text form of the block and inline tree goldmark builds from
// src: every node's kind, position and line segments, a table's alignments
// and a text node's segment and flags. Two parsers that agree on it agree
// on everything the walker reads.
func treeOf(md goldmark.Markdown, src []byte) string {
	root := md.Parser().Parse(text.NewReader(src))
	var b strings.Builder
	var visit func(n gast.Node, depth int)
	visit = func(n gast.Node, depth int) {
		fmt.Fprintf(&b, "%s%s pos=%d", strings.Repeat(" ", depth), n.Kind(), n.Pos())
		if n.Type() == gast.TypeBlock {
			ls := n.Lines()
			for i := 0; i < ls.Len(); i++ {
				s := ls.At(i)
				fmt.Fprintf(&b, " [%d,%d,%d]", s.Start, s.Stop, s.Padding)
			}
		}
		switch v := n.(type) {
		case *east.Table:
			fmt.Fprintf(&b, " align=%v", v.Alignments)
		case *east.TableRow:
			fmt.Fprintf(&b, " align=%v", v.Alignments)
		case *east.TableCell:
			fmt.Fprintf(&b, " align=%v", v.Alignment)
		case *gast.Text:
			fmt.Fprintf(&b, " seg=[%d,%d] soft=%v hard=%v raw=%v", v.Segment.Start, v.Segment.Stop, v.SoftLineBreak(), v.HardLineBreak(), v.IsRaw())
		}
		b.WriteByte('\n')
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			visit(c, depth+1)
		}
	}
	visit(root, 0)
	return b.String()
}

// sameParse fails t when gfmTable and extension.Table disagree on src, on
// the tree or on the units ParseDoc makes of it.
func sameParse(t *testing.T, name string, src []byte) {
	t.Helper()
	if got, want := treeOf(markdown(), src), treeOf(extensionMarkdown(), src); got != want {
		t.Fatalf("%s: tree differs from goldmark's extension.Table\nsource:\n%s\ngot:\n%s\nwant:\n%s", name, src, got, want)
	}
	got, want := parseDocWith(markdown(), src), parseDocWith(extensionMarkdown(), src)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: units differ from goldmark's extension.Table\ngot:  %+v\nwant: %+v", name, got.Units, want.Units)
	}
}

// TestTableMatchesGoldmarkExtension parses every Markdown file kept as test
// data in this module (memories of every host layout, the eval corpus, the
// offline engine's cases) with both parsers and wants the same units.
func TestTableMatchesGoldmarkExtension(t *testing.T) {
	corpus := testdataMarkdown(t)
	files, tables := 0, 0
	for _, rel := range slices.Sorted(maps.Keys(corpus)) {
		src := corpus[rel]
		files++
		for _, u := range parseDocWith(extensionMarkdown(), src).Units {
			if u.Kind == UnitTableRow {
				tables++
			}
		}
		sameParse(t, rel, src)
	}
	if files < 100 || tables == 0 {
		t.Fatalf("compared %d test data files holding %d table rows; the corpus went missing", files, tables)
	}
	t.Logf("%d files, %d table rows: same units", files, tables)
}

// tableCases are the corners of GFM tables (the spec's examples 198–205 and
// what goldmark does beyond them).
var tableCases = []string{
	"| foo | bar |\n| --- | --- |\n| baz | bim |\n",
	"| abc | defghi |\n:-: | -----------:\nbar | baz\n",
	"| f\\|oo  |\n| ------ |\n| b `\\|` az |\n| b **\\|** im |\n",
	"| abc | def |\n| --- | --- |\n| bar | baz |\n> bar\n",
	"| abc | def |\n| --- | --- |\n| bar | baz |\nbar\n\nbar\n",
	"| abc | def |\n| --- |\n| bar |\n",
	"| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |\n",
	"| abc | def |\n| --- | --- |\n",
	"intro line\n| a | b |\n|:--|--:|\n| 1 | 2 |\n",
	"first\nsecond\n| a |\n| - |\n| x |\n",
	"    | a |\n    | - |\n",
	"   | a |\n   | - |\n   | x |\n",
	"| a |\n|---|\n| `x \\| y` and `\\|` |\n| `a\\|b\\|c` |\n",
	"| a | b |\n| :---: | --- |\n| [link](notes.md) | <!-- pin --> |\n",
	"- item\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n",
	"> | q | r |\n> |---|---|\n> | 1 | 2 |\n",
	"| 名前 | 説明 |\n|------|------|\n| 部署 | `make deploy` を使う |\n",
	"a | b\n--|--\n1 | 2\n",
	"|a|\n|:-:|\n|\n",
	"| a |\n| -- |\n| x |\r\n| y |\r\n",
	"| a |\n|---|\n| x |\n|---|\n| y |\n",
	"---\n| a |\n---\n",
	"| a | b |\n| --- | --- |\n| \\| | `|` |\n",
	"| a |\n| :: |\n",
	"| a |\n| -:- |\n",
	"| a |\n| - - |\n",
	"\t| a |\n\t|---|\n",
	"| a |\n|\t-\t|\n| b |\n",
	"| a\v |\n| -\v |\n",
	"| a |\n| -\f |\n",
	"**Production**\n| host | port |\n|---|---|\n| db | 5432 |\n",
}

// TestTableCases compares the two parsers on the corners of the syntax.
func TestTableCases(t *testing.T) {
	for i, src := range tableCases {
		sameParse(t, fmt.Sprintf("case %d", i), []byte(src))
	}
}

// TestTableRandomTables compares the two parsers on random table-like
// documents: lines of cells between pipes, delimiter rows of dashes and
// colons (some malformed) and other Markdown, built from the characters the
// recogniser decides on (pipes, backticks, backslashes, white space, line
// breaks). A property check that runs in every `go test`; FuzzTableParse
// goes further.
func TestTableRandomTables(t *testing.T) {
	cellBits := []string{"a", "bc", " ", "  ", "\t", "`", "`x`", "\\|", "\\", "**b**", "[x](y.md)", "<!-- pin -->", "日本", ":", "-"}
	delimBits := []string{"-", "---", ":--", "--:", ":-:", " --- ", "\t-\t", "::", "- -", ""}
	prefixes := []string{"", "", "", " ", "   ", "    ", "> ", "- ", "1. ", "  "}
	ends := []string{"\n", "\n", "\r\n", "\n\n"}
	rng := rand.New(rand.NewPCG(15, 1))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	row := func(bits []string, cols int) string {
		var b strings.Builder
		if rng.IntN(3) > 0 {
			b.WriteByte('|')
		}
		for c := range cols {
			if c > 0 {
				b.WriteByte('|')
			}
			for range rng.IntN(4) {
				b.WriteString(pick(bits))
			}
		}
		if rng.IntN(3) > 0 {
			b.WriteByte('|')
		}
		return b.String()
	}
	validDelims := []string{"-", "---", ":--", "--:", ":-:", " --- ", "\t-\t", " :-: "}
	delim := func(cols int) string {
		var b strings.Builder
		if rng.IntN(3) > 0 {
			b.WriteByte('|')
		}
		for c := range cols {
			if c > 0 {
				b.WriteByte('|')
			}
			if rng.IntN(10) == 0 {
				b.WriteString(pick(delimBits))
			} else {
				b.WriteString(pick(validDelims))
			}
		}
		if cols == 1 || rng.IntN(3) > 0 {
			b.WriteByte('|')
		}
		return b.String()
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	withTable := 0
	for i := range n {
		var b strings.Builder
		cols := 1 + rng.IntN(4)
		for range 1 + rng.IntN(6) {
			prefix := pick(prefixes)
			b.WriteString(prefix)
			switch rng.IntN(5) {
			case 0:
				b.WriteString(row(cellBits, 1+rng.IntN(4)))
			case 1:
				b.WriteString(row(delimBits, 1+rng.IntN(4)))
			case 2, 3: // a header and its delimiter, mostly matching
				b.WriteString(row(cellBits, cols) + pick(ends) + prefix)
				b.WriteString(delim(max(1, cols+rng.IntN(5)/4*(rng.IntN(3)-1))))
			default:
				b.WriteString(pick(cellBits) + pick(cellBits))
			}
			b.WriteString(pick(ends))
		}
		src := []byte(b.String())
		sameParse(t, fmt.Sprintf("random %d", i), src)
		if strings.Contains(treeOf(extensionMarkdown(), src), "Table") {
			withTable++
		}
	}
	// The generator must keep making tables, or this compares nothing.
	if withTable < n/10 {
		t.Fatalf("only %d of %d random documents hold a table", withTable, n)
	}
	t.Logf("%d of %d random documents hold a table", withTable, n)
}

// FuzzTableParse: on any bytes gfmTable builds the tree goldmark's
// extension.Table builds, and ParseDoc the same units.
func FuzzTableParse(f *testing.F) {
	for _, c := range tableCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		sameParse(t, "fuzz", src)
	})
}
