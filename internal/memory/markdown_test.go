package memory

import (
	"strings"
	"testing"
)

func TestParseDocUnits(t *testing.T) {
	src := "\xef\xbb\xbf---\r\nname: x\r\n---\r\n# Services\r\n\r\n## Billing\n\n### Setup\n\n- Run the migrations.\n  continued here\n- Seed the tables.\n  - nested\n\n## Catalog\n\n### Setup\n\n- Run the migrations.\n\n**Production**\n\n1. step one\n2. step two\n\n> quoted\n> more\n\n```sh\n# not a heading\n```\n\n    indented code\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
	d := ParseDoc([]byte(src))
	type want struct {
		kind    UnitKind
		text    string
		path    string
		ordered bool
		nested  bool
	}
	var got []want
	for _, u := range d.Units {
		got = append(got, want{u.Kind, d.Text(u), strings.Join(u.Path, " › "), u.Ordered, u.Nested})
	}
	wants := []want{
		{UnitFrontmatter, "\xef\xbb\xbf---\r\nname: x\r\n---\r\n", "", false, false},
		{UnitHeading, "# Services\r\n", "", false, false},
		{UnitHeading, "## Billing\n", "Services", false, false},
		{UnitHeading, "### Setup\n", "Services › Billing", false, false},
		{UnitItem, "- Run the migrations.\n  continued here\n", "Services › Billing › Setup", false, false},
		{UnitParagraph, "- Run the migrations.\n  continued here\n", "Services › Billing › Setup", false, false},
		{UnitItem, "- Seed the tables.\n  - nested\n", "Services › Billing › Setup", false, true},
		{UnitParagraph, "- Seed the tables.\n", "Services › Billing › Setup", false, false},
		{UnitItem, "  - nested\n", "Services › Billing › Setup", false, false},
		{UnitParagraph, "  - nested\n", "Services › Billing › Setup", false, false},
		{UnitHeading, "## Catalog\n", "Services", false, false},
		{UnitHeading, "### Setup\n", "Services › Catalog", false, false},
		{UnitItem, "- Run the migrations.\n", "Services › Catalog › Setup", false, false},
		{UnitParagraph, "- Run the migrations.\n", "Services › Catalog › Setup", false, false},
		{UnitParagraph, "**Production**\n", "Services › Catalog › Setup › Production", false, false},
		{UnitItem, "1. step one\n", "Services › Catalog › Setup › Production", true, false},
		{UnitParagraph, "1. step one\n", "Services › Catalog › Setup › Production", false, false},
		{UnitItem, "2. step two\n", "Services › Catalog › Setup › Production", true, false},
		{UnitParagraph, "2. step two\n", "Services › Catalog › Setup › Production", false, false},
		{UnitQuote, "> quoted\n> more\n", "Services › Catalog › Setup › Production", false, false},
		{UnitParagraph, "> quoted\n> more\n", "Services › Catalog › Setup › Production", false, false},
		{UnitCode, "```sh\n# not a heading\n```\n", "Services › Catalog › Setup › Production", false, false},
		{UnitCode, "    indented code\n", "Services › Catalog › Setup › Production", false, false},
		{UnitTableRow, "| a | b |\n", "Services › Catalog › Setup › Production", false, false},
		{UnitTableRow, "| 1 | 2 |\n", "Services › Catalog › Setup › Production", false, false},
	}
	if len(got) != len(wants) {
		for _, g := range got {
			t.Logf("%+v", g)
		}
		t.Fatalf("%d units, want %d", len(got), len(wants))
	}
	for i := range wants {
		if got[i] != wants[i] {
			t.Errorf("unit %d = %+v, want %+v", i, got[i], wants[i])
		}
	}
	for _, u := range d.Units {
		if u.Kind == UnitQuote && !u.Quoted {
			t.Error("a blockquote is not marked quoted")
		}
	}
}

func TestParseDocPinsLinksAndProse(t *testing.T) {
	src := "- fact one <!-- pin --> (ask Ana)\n- write `<!-- pin -->` to pin\n\n```\n<!-- pin -->\n```\n\nSee [the runbook](runbook.md), <notes.md> and `glossary.md`. Yesterday it broke.\n\n> yesterday quoted\n"
	d := ParseDoc([]byte(src))
	if len(d.Pins) != 1 || d.LineOf(d.Pins[0].Start) != 1 {
		t.Errorf("pins = %+v, want one on line 1", d.Pins)
	}
	if !d.PinnedLine(3) || d.PinnedLine(len("- fact one <!-- pin --> (ask Ana)\n")+2) {
		t.Error("PinnedLine disagrees with Pins")
	}
	var dests []string
	for _, l := range d.Links {
		dests = append(dests, l.Dest)
	}
	// <notes.md> is text, not an autolink (an autolink needs a scheme).
	if strings.Join(dests, ",") != "runbook.md" {
		t.Errorf("links = %v", dests)
	}
	if strings.Join(d.CodeSpans, ",") != "<!-- pin -->,glossary.md" {
		t.Errorf("code spans = %v", d.CodeSpans)
	}
	var prose []string
	for _, p := range d.Prose {
		prose = append(prose, src[p.Start:p.End])
	}
	all := strings.Join(prose, "|")
	if !strings.Contains(all, "Yesterday it broke.") || strings.Contains(all, "quoted") || strings.Contains(all, "runbook.md") || strings.Contains(all, "the runbook") {
		t.Errorf("prose runs = %q", all)
	}
}

// FuzzParseDoc: any bytes parse, and every unit is a whole-line range of the
// source, so that a splice of it never cuts a line.
func FuzzParseDoc(f *testing.F) {
	f.Add([]byte("# H\n\n- a\n  b\n- c\n  ```\n  x\n  ```\n"))
	f.Add([]byte("---\nname: x\n---\n> q\n\n| a |\n|---|\n| 1 |\n"))
	f.Add([]byte("\xef\xbb\xbf**B**\r\n\r\n1. x <!-- pin -->\r\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		d := ParseDoc(src)
		for _, u := range d.Units {
			if u.Start < 0 || u.Start > u.End || u.End > len(src) {
				t.Fatalf("unit %+v out of range (len %d)", u, len(src))
			}
			if u.Start > 0 && src[u.Start-1] != '\n' {
				t.Fatalf("unit %+v does not start a line", u)
			}
			if u.End < len(src) && u.End > 0 && src[u.End-1] != '\n' {
				t.Fatalf("unit %+v does not end a line", u)
			}
		}
		for _, p := range d.Prose {
			if p.Start < 0 || p.Start > p.End || p.End > len(src) {
				t.Fatalf("prose %+v out of range", p)
			}
		}
	})
}
