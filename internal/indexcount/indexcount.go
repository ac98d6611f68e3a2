// Package indexcount counts an agent's index (the file it puts into every
// prompt) as the agent does when it loads it: Claude Code strips front
// matter and top-level HTML comment blocks and measures UTF-16 code units,
// codebot counts the file as written. What each agent keeps of it is
// package host's (host.IndexLimitOf); Of joins the two.
//
// It is a package of its own, not part of host, because Claude Code's
// count parses Markdown (goldmark): every package host imports initialises
// before `dream hook` and `dream maybe` can answer from the binary's early
// start (cmd/dream/internal/early imports host), and goldmark imports
// net/url, which Go initialises only after every ready package whose path
// sorts before it. In host, goldmark put about a hundred more packages'
// initialisers (4,000 of 6,600 allocations, a fifth of the process's
// time) before that answer, on every turn of every agent (issue 30).
package indexcount

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/dreamkit/dream/internal/host"
)

// Limit is how an agent loads its index and where it cuts it
// (host.IndexLimit, whose fields and JSON it has), with the agent's own
// way of counting.
type Limit struct {
	host.IndexLimit
	count func(src []byte) (lines, size int)
	size  func(text []byte) int
}

// Count measures an index as the agent counts it: lines is how many lines
// it must load for nothing to be cut (blank lines past the last line that
// holds anything cost nothing), size the size of what it loads, in Unit.
func (l Limit) Count(src []byte) (lines, size int) { return l.count(src) }

// Size measures text, a part of an index, in Unit: about what taking it
// out saves of the size Count gives.
func (l Limit) Size(text []byte) int { return l.size(text) }

// counters is how each agent that keeps an index counts it, by host name;
// an agent host.IndexLimitOf gives a limit for must have one here
// (TestCountersMatchHosts).
var counters = map[string]struct {
	count func(src []byte) (lines, size int)
	size  func(text []byte) int
}{
	"claude":  {claudeIndexCount, func(text []byte) int { return utf16Len(jsString(text)) }},
	"codebot": {rawIndexCount, func(text []byte) int { return len(text) }},
}

// Of returns how the named agent loads its index; ok is false for an
// agent that keeps none. With no agent named (a bare --memory-dir) it is
// the strictest of every agent that keeps a MEMORY.md index, each count
// taken as that agent counts: the index then loads whole in whichever of
// them reads it.
func Of(name string) (Limit, bool) {
	if name != "" {
		return of(name)
	}
	var all []Limit
	for _, n := range host.Names() {
		if l, ok := of(n); ok {
			all = append(all, l)
		}
	}
	strict, err := strictest(all)
	if err != nil {
		panic("indexcount: the registry's index limits: " + err.Error())
	}
	return strict, len(all) > 0
}

// of is the named agent's limit with its counter.
func of(name string) (Limit, bool) {
	l, ok := host.IndexLimitOf(name)
	if !ok {
		return Limit{}, false
	}
	c, ok := counters[name]
	if !ok {
		panic("indexcount: host " + name + " loads an index that nothing here counts")
	}
	return Limit{IndexLimit: l, count: c.count, size: c.size}, true
}

// strictest is the limit of an index that loads whole in each agent of
// all: the larger line count held to the smaller line limit, and the
// size as the agents with a size limit measure it held to the smallest of
// theirs. Sizes in different units are not comparable: limits that count
// them so are refused, not mixed.
func strictest(all []Limit) (Limit, error) {
	var agents, rules, sources []string
	var sized []Limit
	strict := Limit{IndexLimit: host.IndexLimit{Unit: host.UnitBytes}, size: func(b []byte) int { return len(b) }}
	for _, l := range all {
		agents = append(agents, l.Agent)
		rules, sources = append(rules, l.Agent+": "+l.Rule), append(sources, l.Agent+": "+l.Source)
		if strict.MaxLines == 0 || l.MaxLines < strict.MaxLines {
			strict.MaxLines = l.MaxLines
		}
		if l.MaxFileBytes > 0 && (strict.MaxFileBytes == 0 || l.MaxFileBytes < strict.MaxFileBytes) {
			strict.MaxFileBytes = l.MaxFileBytes
		}
		if l.MaxSize == 0 {
			continue
		}
		if len(sized) > 0 && l.Unit != sized[0].Unit {
			return Limit{}, fmt.Errorf("%s counts size in %s, %s in %s: no one size holds both", sized[0].Agent, sized[0].Unit, l.Agent, l.Unit)
		}
		sized = append(sized, l)
		if strict.MaxSize == 0 || l.MaxSize < strict.MaxSize {
			strict.MaxSize = l.MaxSize
		}
		strict.Unit = l.Unit
	}
	strict.Agent = "every agent that keeps a MEMORY.md index (" + strings.Join(agents, ", ") + ")"
	strict.Source = "no --host named the agent, so each one's own rule; " + strings.Join(sources, "; ")
	strict.Rule = "counted as each of them counts, the larger count held to the smaller limit (the size as the agents with a size limit measure it); " + strings.Join(rules, "; ")
	strict.count = func(src []byte) (lines, size int) {
		for _, l := range all {
			n, s := l.count(src)
			lines = max(lines, n)
			if l.MaxSize > 0 {
				size = max(size, s)
			}
		}
		if len(sized) == 0 {
			size = len(src)
		}
		return lines, size
	}
	if len(sized) > 0 {
		strict.size = func(text []byte) (size int) {
			for _, l := range sized {
				size = max(size, l.size(text))
			}
			return size
		}
	}
	return strict, nil
}

// claudeIndexCount counts MEMORY.md as Claude Code 2.1.197 loads it
// (host's claudeIndexLimit): the lines of claudeIndexText and its length
// in UTF-16 code units.
func claudeIndexCount(src []byte) (lines, size int) {
	s := claudeIndexText(src)
	if s == "" {
		return 0, 0
	}
	return strings.Count(s, "\n") + 1, utf16Len(s)
}

// claudeIndexText is MEMORY.md as Claude Code 2.1.197 loads it, before it
// cuts anything: the file read as UTF-8 (a byte-order mark kept), its
// front matter removed, then its HTML comment blocks, and the rest trimmed
// as JavaScript trims.
func claudeIndexText(src []byte) string {
	return strings.TrimFunc(withoutCommentBlocks(withoutFrontmatter(jsString(src))), isJSSpace)
}

// withoutFrontmatter is s without what Claude Code's front matter pattern,
// /^---\s*\n([\s\S]*?)---\s*\n?/, matches (the YAML need not parse): from
// a leading "---" and the white space after it up to its last newline, to
// the first "---" after that, wherever it is on its line, with the white
// space after it.
func withoutFrontmatter(s string) string {
	rest, ok := strings.CutPrefix(s, "---")
	if !ok {
		return s
	}
	space := len(rest) - len(strings.TrimLeftFunc(rest, isJSSpace))
	nl := strings.LastIndexByte(rest[:space], '\n')
	if nl < 0 {
		return s
	}
	end := strings.Index(rest[nl+1:], "---")
	if end < 0 {
		return s
	}
	return strings.TrimLeftFunc(rest[nl+1+end+3:], isJSSpace)
}

// htmlComment is the comment Claude Code removes from a comment block.
var htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)

// blockParser parses Markdown blocks only (CommonMark, no extensions):
// where an HTML block starts and ends.
var blockParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...))
})

// withoutCommentBlocks is Claude Code's removal of HTML comments, which
// lexes the text with marked (gfm off) when it holds "<!--": carriage
// returns become newlines (marked's first step), and each top-level HTML
// block that starts with "<!--" and holds "-->" loses every <!-- ... -->,
// the newlines right after it included; what is left of the block stays
// unless it is blank. A comment inside a paragraph, a list item, a quote
// or a code block stays, and so does an unclosed one. The blocks are
// goldmark's (CommonMark); where marked's differ, marked's are followed:
// in marked a "<!--" line indented by a space does not interrupt a
// paragraph (nor a quote's), so it is text of the paragraph.
func withoutCommentBlocks(s string) string {
	if !strings.Contains(s, "<!--") {
		return s
	}
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s)
	src := []byte(s)
	var b strings.Builder
	at := 0
	// para: the block before ends in a paragraph marked would continue.
	para := false
	for n := blockParser().Parse(text.NewReader(src)).FirstChild(); n != nil; n = n.NextSibling() {
		after := para
		switch n.(type) {
		case *ast.Paragraph, *ast.Blockquote:
			para = true
		default:
			para = false
		}
		h, ok := n.(*ast.HTMLBlock)
		if !ok || h.HTMLBlockType != ast.HTMLBlockType2 || h.Lines().Len() == 0 {
			continue
		}
		start := strings.LastIndexByte(s[:h.Lines().At(0).Start], '\n') + 1
		if after && s[start] == ' ' && start > 0 && !blankLine(s, start-1) {
			para = true
			continue
		}
		end := h.Lines().At(h.Lines().Len() - 1).Stop
		if h.HasClosure() {
			end = h.ClosureLine.Stop
		}
		for end < len(s) && s[end] == '\n' {
			end++
		}
		raw := s[start:end]
		if !strings.Contains(raw, "-->") {
			continue
		}
		b.WriteString(s[at:start])
		if rest := htmlComment.ReplaceAllString(raw, ""); strings.TrimFunc(rest, isJSSpace) != "" {
			b.WriteString(rest)
		}
		at = end
	}
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// blankLine reports whether the line of s that ends at end (its "\n") is
// blank: spaces and tabs at most.
func blankLine(s string, end int) bool {
	return strings.Trim(s[strings.LastIndexByte(s[:end], '\n')+1:end], " \t") == ""
}

// jsString is src as JavaScript reads a UTF-8 file: each ill-formed
// sequence (its maximal part that could begin a character, as the WHATWG
// decoder takes it) one U+FFFD, a byte-order mark kept.
func jsString(src []byte) string {
	if utf8.Valid(src) {
		return string(src)
	}
	var b strings.Builder
	for len(src) > 0 {
		r, n := utf8.DecodeRune(src)
		if r == utf8.RuneError && n == 1 {
			for k := min(3, len(src)); k > 1; k-- {
				if !utf8.FullRune(src[:k]) {
					n = k
					break
				}
			}
		}
		b.WriteRune(r)
		src = src[n:]
	}
	return b.String()
}

// utf16Len is the length JavaScript gives the valid UTF-8 string s.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// isJSSpace is what JavaScript's String.prototype.trim removes: white
// space (the byte-order mark included) and line terminators.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0xFEFF, 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// rawIndexCount counts lines as written: up to the last line that holds
// anything but white space; size is in bytes.
func rawIndexCount(src []byte) (lines, size int) {
	n := 0
	for i := 0; i < len(src); {
		end := i
		for end < len(src) && src[end] != '\n' {
			end++
		}
		n++
		if len(bytes.TrimSpace(src[i:end])) > 0 {
			lines = n
		}
		i = end + 1
	}
	return lines, len(src)
}
