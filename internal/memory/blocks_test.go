package memory

import (
	"fmt"
	"testing"
	"time"
)

// sameBlocks fails t unless ParseBlocks(src) has ParseDoc(src)'s units in
// every structural field (Kind, Start, End, Parent, Leaf, Ordered, Nested,
// Quoted) and its BodyStart, and leaves the text fields empty.
func sameBlocks(t *testing.T, name string, src []byte) {
	t.Helper()
	full, blocks := ParseDoc(src), ParseBlocks(src)
	if full.BodyStart != blocks.BodyStart {
		t.Fatalf("%s: BodyStart %d, ParseDoc's %d", name, blocks.BodyStart, full.BodyStart)
	}
	if len(full.Units) != len(blocks.Units) {
		t.Fatalf("%s: %d units, ParseDoc's %d\nsource: %q", name, len(blocks.Units), len(full.Units), src)
	}
	for i, f := range full.Units {
		b := blocks.Units[i]
		if f.Kind != b.Kind || f.Start != b.Start || f.End != b.End || f.Parent != b.Parent || f.Leaf != b.Leaf ||
			f.Ordered != b.Ordered || f.Nested != b.Nested || f.Quoted != b.Quoted {
			t.Fatalf("%s: unit %d is %+v, ParseDoc's %+v\nsource: %q", name, i, b, f, src)
		}
		if b.Kind != UnitFrontmatter && (b.Content != "" || len(b.Path) != 0) {
			t.Fatalf("%s: unit %d has text %q, path %q", name, i, b.Content, b.Path)
		}
	}
	if blocks.Prose != nil || blocks.Links != nil || blocks.CodeSpans != nil || blocks.Comments != nil || blocks.Pins != nil {
		t.Fatalf("%s: ParseBlocks filled inline fields", name)
	}
}

// TestParseBlocksMatchesParseDoc holds ParseBlocks to ParseDoc on the
// module's test data, the walker's seeds and random documents.
func TestParseBlocksMatchesParseDoc(t *testing.T) {
	extra := []string{
		"Para with **bold\nover lines** and `code\nspan` and <span\nclass=x>html</span>\n",
		"[ref]: https://example.com \"t\"\n\n[ref]\n",
		"[a]: /x\n[b]: /y\npara\n",
		"| a | b |\n|---|---|\n| `x\\|y` | [l](u) |\n| 1 |\n",
		"# Heading {#id .c}\n\ntext  \nhard break\\\nnext\n",
		"- [ ] task\n- [x] done <!-- pin -->\n\n> quote with `code` and\n> **bold**\n",
		"1. 第一步：运行 `make test`\n2. 第二步\n   ```sh\n   go vet ./...\n   ```\n3. 发布\n",
		"Setext\n===\n\nAnother\n---\n\n***\n",
		"<div>\n*not* parsed\n</div>\n\n<!-- a comment\nover lines -->\n",
		"<https://example.com/a.go> and https://example.com/b `c` \\* escaped\n",
	}
	corpus := map[string][]byte{}
	for i, s := range extra {
		corpus[fmt.Sprintf("extra[%d]", i)] = []byte(s)
	}
	overCorpus(t, 7, corpus, sameBlocks)
}

// FuzzParseBlocksMatchesParseDoc: on any bytes, ParseBlocks finds the
// units ParseDoc finds, with the same extents and nesting.
func FuzzParseBlocksMatchesParseDoc(f *testing.F) {
	seedCorpus(f, 8)
	f.Fuzz(func(t *testing.T, src []byte) {
		sameBlocks(t, "fuzz", src)
	})
}

// BenchmarkParseBlocks times ParseBlocks against ParseDoc over the module's
// test data and random documents, in turn in the same loop; the figure to
// read is x-parsedoc, ParseBlocks' time over ParseDoc's.
//
//	go test -run=^$ -bench=ParseBlocks ./internal/memory/
func BenchmarkParseBlocks(b *testing.B) {
	docs := benchDocs(b, 9)
	var full, blocks time.Duration
	for b.Loop() {
		t0 := time.Now()
		for _, d := range docs {
			ParseDoc(d)
		}
		t1 := time.Now()
		for _, d := range docs {
			ParseBlocks(d)
		}
		full, blocks = full+t1.Sub(t0), blocks+time.Since(t1)
	}
	b.ReportMetric(float64(full.Nanoseconds())/float64(b.N), "parsedoc-ns")
	b.ReportMetric(float64(blocks.Nanoseconds())/float64(b.N), "parseblocks-ns")
	b.ReportMetric(float64(blocks)/float64(full), "x-parsedoc")
}
