package memory

import (
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sameAsReference fails t when ParseDoc and the reference walker (the one
// before issue 15's allocation work) make different Docs of src: every
// field, nil and empty slices told apart.
func sameAsReference(t *testing.T, name string, src []byte) {
	t.Helper()
	got, want := ParseDoc(src), refParseDoc(src)
	if !reflect.DeepEqual(got, want) {
		for i := 0; i < len(got.Units) && i < len(want.Units); i++ {
			if !reflect.DeepEqual(got.Units[i], want.Units[i]) {
				t.Fatalf("%s: unit %d differs from the reference walker's\nsource:\n%q\ngot:  %#v\nwant: %#v", name, i, src, got.Units[i], want.Units[i])
			}
		}
		t.Fatalf("%s: Doc differs from the reference walker's\nsource:\n%q\ngot:  %#v\nwant: %#v", name, src, got, want)
	}
}

// walkFragments are the blocks random documents are made of: what memory
// files hold (nested headings, bold labels, bullets with continuations,
// nested lists, numbered steps, fenced and indented code, quotes, tables,
// HTML blocks and comments, pins, links, Chinese), and the corners between
// them (lazy lines, fences left open, blank-line changes).
var walkFragments = []string{
	"# Billing\n", "## Setup\n", "### Steps\n", "#### 2026-11-18\n", "Setup\n=====\n", "Notes\n---\n",
	"**Production**\n", "**Staging**:\n", "__Rules__\n",
	"- Deploys run from main after review.\n", "- Deploys run from main after review.\n  It takes ten minutes.\n",
	"* The cache is warmed from the primary.\n", "- [Billing](billing.md) — invoices and refunds\n",
	"- outer\n  - inner one\n  - inner two\n    - deeper\n", "- item\n\n  second paragraph\n",
	"1. Drain the node.\n2. Rotate the keys.\n3. Drain the node.\n", "1) one\n2) two\n", "10. ten\n",
	"- [ ] todo\n- [x] done\n", "-\n  empty first line\n",
	"Yesterday we moved the importer to the new cluster.\n", "A paragraph\nwith a lazy\ncontinuation.\n",
	"Hard break  \nnext line\n", "Escaped \\*star\\* and `code` and [link](a.md) and <https://example.com>.\n",
	"![image](img.png) and *emphasis* and **strong** and ~~gone~~.\n",
	"```go\nfunc main() {}\n```\n", "~~~\nraw\n~~~\n", "```\nnever closed\n", "    indented code\n",
	"  ```sh\n  go test ./...\n  ```\n",
	"> Rule: ask before deleting anything.\n", "> quote\nlazy quote line\n", "> - quoted item\n> - another\n",
	"> > nested quote\n", "> ```\n> code in quote\n> ```\n",
	"| a | b |\n|---|---|\n| 1 | 2 |\n", "| 名前 | 説明 |\n|:--|--:|\n| 部署 | `make` |\n",
	"<div>\nblock html\n</div>\n", "<!-- pin -->\n", "Keep this line. <!-- pin -->\n", "<!-- a comment\nover lines -->\n",
	"Inline <b>html</b> and <!--c--> here.\n", "***\n", "- - -\n",
	"昨天，我们把导入器迁到了新集群。\n", "- 部署前先在预发环境验证迁移脚本。\n", "用户偏好简洁的提交信息。\n",
	"[ref]: https://example.com \"Title\"\n", "Text with [ref] use.\n",
	"\n", "\n", "\n", "\t\n", "   \n",
}

// randomDoc builds a document of random fragments, sometimes with a
// frontmatter, a BOM, CRLF line endings, indentation or a missing final
// newline.
func randomDoc(rng *rand.Rand) []byte {
	var b strings.Builder
	if rng.IntN(6) == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	if rng.IntN(3) == 0 {
		b.WriteString("---\nname: topic\ndescription: a topic\ntype: project\n---\n\n")
	}
	for range 1 + rng.IntN(14) {
		f := walkFragments[rng.IntN(len(walkFragments))]
		switch rng.IntN(8) {
		case 0:
			f = "  " + strings.ReplaceAll(strings.TrimSuffix(f, "\n"), "\n", "\n  ") + "\n"
		case 1:
			f = "- " + f
		case 2:
			f = "> " + f
		}
		b.WriteString(f)
		if rng.IntN(2) == 0 {
			b.WriteString("\n")
		}
	}
	s := b.String()
	if rng.IntN(5) == 0 {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	if rng.IntN(5) == 0 {
		s = strings.TrimRight(s, "\r\n")
	}
	return []byte(s)
}

// testdataMarkdown is every Markdown file under a testdata dir of this
// module, by its path from the module's root.
func testdataMarkdown(t testing.TB) map[string][]byte {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") || !strings.Contains(filepath.ToSlash(path), "/testdata/") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = src
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// walkCorpus is every Markdown file kept as test data in this module, the
// table corners and the fuzz seeds.
func walkCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	out := testdataMarkdown(t)
	for i, c := range tableCases {
		out[fmt.Sprintf("tableCases[%d]", i)] = []byte(c)
	}
	for i, c := range walkSeeds {
		out[fmt.Sprintf("walkSeeds[%d]", i)] = []byte(c)
	}
	return out
}

var walkSeeds = []string{
	"", "\n", "#", "- ", "1.", "> ", "```", "---\n", "---\n---\n", "\xef\xbb\xbf", "\xef\xbb\xbf---\na: b\n---\n# H\n",
	"# H\n\n- a\n  b\n- c\n  ```\n  x\n  ```\n",
	"---\nname: x\n---\n> q\n\n| a |\n|---|\n| 1 |\n",
	"\xef\xbb\xbf**B**\r\n\r\n1. x <!-- pin -->\r\n",
	"# A\n## B\n### C\n#### D\n##### E\n###### F\n####### G\npara\n# A2\npara\n",
	"**Label**\n- under label\n## H\n- under heading\n",
	"- a\n- a\n- b\n\n\n- a\n",
}

// TestWalkerMatchesReference holds ParseDoc to the reference walker on the
// module's test data and on random documents: a property check that runs
// in every `go test`; FuzzWalkerMatchesReference goes further.
func TestWalkerMatchesReference(t *testing.T) {
	overCorpus(t, 4, nil, sameAsReference)
}

// overCorpus runs check on every document of walkCorpus and of extra, and
// on 3,000 random documents (500 with -short) drawn from the PCG seed
// (15, seed).
func overCorpus(t *testing.T, seed uint64, extra map[string][]byte, check func(t *testing.T, name string, src []byte)) {
	t.Helper()
	corpus := walkCorpus(t)
	if len(corpus) < 100 {
		t.Fatalf("%d documents: the corpus went missing", len(corpus))
	}
	maps.Copy(corpus, extra)
	for name, src := range corpus {
		check(t, name, src)
	}
	n := 3000
	if testing.Short() {
		n = 500
	}
	rng := rand.New(rand.NewPCG(15, seed))
	for i := range n {
		check(t, fmt.Sprintf("random[%d]", i), randomDoc(rng))
	}
}

// seedCorpus adds the walker's seeds, the table corners and 40 random
// documents drawn from the PCG seed (15, seed) to f's corpus.
func seedCorpus(f *testing.F, seed uint64) {
	for _, s := range walkSeeds {
		f.Add([]byte(s))
	}
	for _, s := range tableCases {
		f.Add([]byte(s))
	}
	rng := rand.New(rand.NewPCG(15, seed))
	for range 40 {
		f.Add(randomDoc(rng))
	}
}

// benchDocs is what the parse benchmarks parse: the module's test data and
// 300 random documents (seeded with seed).
func benchDocs(b *testing.B, seed uint64) [][]byte {
	var docs [][]byte
	for _, src := range walkCorpus(b) {
		docs = append(docs, src)
	}
	rng := rand.New(rand.NewPCG(15, seed))
	for range 300 {
		docs = append(docs, randomDoc(rng))
	}
	return docs
}

// FuzzWalkerMatchesReference: on any bytes, ParseDoc makes the Doc the
// reference walker makes.
func FuzzWalkerMatchesReference(f *testing.F) {
	seedCorpus(f, 5)
	f.Fuzz(func(t *testing.T, src []byte) {
		sameAsReference(t, "fuzz", src)
	})
}

// BenchmarkParseDoc parses the module's test data and random documents
// with the reference walker (the baseline) and with ParseDoc, in turn in
// the same loop (each from a collected heap); the figure to read is
// x-reference, ParseDoc's time over the reference's (allocations are in the -benchmem figures of the whole
// loop, so read them from a run of each alone: -bench=ParseDoc/ref and
// -bench=ParseDoc/current).
//
//	go test -run=^$ -bench=ParseDoc -benchmem ./internal/memory/
func BenchmarkParseDoc(b *testing.B) {
	docs := benchDocs(b, 6)
	b.Run("both", func(b *testing.B) {
		// Each half starts from a collected heap (outside the timing), in
		// alternating order, so that neither pays for the other's garbage.
		var took [2]time.Duration
		parse := [2]func([]byte) *Doc{refParseDoc, ParseDoc}
		i := 0
		for b.Loop() {
			i++
			for k := range 2 {
				which := (k + i) % 2
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				t0 := time.Now()
				for _, d := range docs {
					parse[which](d)
				}
				took[which] += time.Since(t0)
			}
		}
		b.ReportMetric(float64(took[1])/float64(took[0]), "x-reference")
	})
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			for _, d := range docs {
				refParseDoc(d)
			}
		}
	})
	b.Run("current", func(b *testing.B) {
		for b.Loop() {
			for _, d := range docs {
				ParseDoc(d)
			}
		}
	})
}
