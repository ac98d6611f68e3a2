package host

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// The units an index's size is counted in.
const (
	UnitBytes = "bytes"
	// UnitUTF16 is a JavaScript string's length: one for each character
	// of the Basic Multilingual Plane ("é", "東" and "—" alike), two for one
	// beyond it (an emoji), whatever its UTF-8 bytes.
	UnitUTF16 = "UTF-16 code units"
)

// IndexLimit is how an agent loads its index (the file it puts into every
// prompt) and where it cuts it: what it counts as a line and how it
// measures size (in Unit), and how much it keeps. A dream keeps the index
// within it counted exactly so: counted any other way, either lines the
// agent never sees stay past the cut, or lines it does see are moved out
// for nothing.
type IndexLimit struct {
	// Agent is the agent and the version the rule was read from.
	Agent string `json:"agent"`
	// Source says where the rule was read and how it was checked.
	Source string `json:"source"`
	// Rule says in words what is counted and what is cut.
	Rule string `json:"rule"`
	// MaxLines and MaxSize are what the agent keeps of the counted text,
	// MaxSize in Unit; MaxSize is 0 for an agent that cuts by lines only.
	MaxLines int    `json:"max_lines"`
	MaxSize  int    `json:"max_size,omitempty"`
	Unit     string `json:"size_unit"`
	// MaxFileBytes is the largest file, in bytes on disk, the agent reads
	// at all (a larger one loads nothing); 0 when it reads any.
	MaxFileBytes int `json:"max_file_bytes,omitempty"`
	count        func(src []byte) (lines, size int)
	size         func(text []byte) int
}

// Count measures an index as the agent counts it: lines is how many lines
// it must load for nothing to be cut (blank lines past the last line that
// holds anything cost nothing), size the size of what it loads, in Unit.
func (l IndexLimit) Count(src []byte) (lines, size int) { return l.count(src) }

// Size measures text, a part of an index, in Unit: about what taking it
// out saves of the size Count gives.
func (l IndexLimit) Size(text []byte) int { return l.size(text) }

// Fits reports whether an index of lines and size (as Count gives them)
// loads whole.
func (l IndexLimit) Fits(lines, size int) bool {
	return lines <= l.MaxLines && (l.MaxSize == 0 || size <= l.MaxSize)
}

// Unread reports an index, src, too large on disk for the agent to read
// at all.
func (l IndexLimit) Unread(src []byte) bool {
	return l.MaxFileBytes > 0 && len(src) > l.MaxFileBytes
}

// Phrase is the limit as a phrase: "200 lines and 25000 UTF-16 code units".
func (l IndexLimit) Phrase() string {
	if l.MaxSize > 0 {
		return fmt.Sprintf("%d lines and %d %s", l.MaxLines, l.MaxSize, l.Unit)
	}
	return fmt.Sprintf("%d lines", l.MaxLines)
}

// Summary is the limit in a few words, for a listing of the agent's files.
func (l IndexLimit) Summary() string {
	s := fmt.Sprintf("first %d lines", l.MaxLines)
	if l.MaxSize > 0 {
		s += fmt.Sprintf(", then %d %s", l.MaxSize, l.Unit)
	}
	if l.MaxFileBytes > 0 {
		s += fmt.Sprintf("; none of a file over %d bytes", l.MaxFileBytes)
	}
	return s + " (" + l.Agent + ")"
}

// IndexLimitOf returns how the named agent loads its index; ok is false for
// an agent that keeps none. With no agent named (a bare --memory-dir) it is
// the strictest of every agent that keeps a MEMORY.md index, each count
// taken as that agent counts: the index then loads whole in whichever of
// them reads it.
func IndexLimitOf(name string) (IndexLimit, bool) {
	if name != "" {
		for _, h := range hosts {
			if h.name == name && h.index != nil {
				return h.index(), true
			}
		}
		return IndexLimit{}, false
	}
	var all []IndexLimit
	for _, h := range hosts {
		if h.index != nil {
			all = append(all, h.index())
		}
	}
	strict, err := strictest(all)
	if err != nil {
		panic("host: the registry's index limits: " + err.Error())
	}
	return strict, len(all) > 0
}

// strictest is the limit of an index that loads whole in each agent of
// all: the larger line count held to the smaller line limit, and the
// size as the agents with a size limit measure it held to the smallest of
// theirs. Sizes in different units are not comparable: limits that count
// them so are refused, not mixed.
func strictest(all []IndexLimit) (IndexLimit, error) {
	var agents, rules, sources []string
	var sized []IndexLimit
	strict := IndexLimit{Unit: UnitBytes, size: func(b []byte) int { return len(b) }}
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
			return IndexLimit{}, fmt.Errorf("%s counts size in %s, %s in %s: no one size holds both", sized[0].Agent, sized[0].Unit, l.Agent, l.Unit)
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

// claudeIndexLimit is Claude Code's loading of MEMORY.md (claudeIndexText),
// then its cut: past 200 lines only the first 200 are loaded, blank lines
// counting, and past 25,000 UTF-16 code units the text is cut at a line
// end, with a warning; a file over 4 MiB on disk is not loaded at all.
func claudeIndexLimit() IndexLimit {
	return IndexLimit{
		Agent:        "Claude Code 2.1.197",
		Source:       "read from the @anthropic-ai/claude-code 2.1.197 binary (the code that reads MEMORY.md, strips its front matter and HTML comments, and cuts it) and checked against that binary by dream's conformance suite (conformance/claude_limits_test.go: TestClaudeIndexLimits, TestClaudeIndexCount)",
		Rule:         "the file read as UTF-8; front matter removed (from a first line of \"---\" to the next \"---\", even mid-line, YAML or not); if the text holds \"<!--\", carriage returns made newlines and each top-level HTML comment block removed (a comment in a paragraph, list, quote or code stays); the rest trimmed and split on \"\\n\"; past 200 lines only the first 200 load (blank lines count), then the text is cut at the last line end within 25,000 UTF-16 code units (JavaScript's string length, not bytes); a file over 4,194,304 bytes on disk is not loaded at all",
		MaxLines:     200,
		MaxSize:      25000,
		Unit:         UnitUTF16,
		MaxFileBytes: 4 << 20,
		count:        claudeIndexCount,
		size:         func(text []byte) int { return utf16Len(jsString(text)) },
	}
}

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

// codebotIndexLimit is codebot's: it puts MEMORY.md into every turn as
// written and cuts it hard past 200 lines.
func codebotIndexLimit() IndexLimit {
	return IndexLimit{
		Agent:    "codebot",
		Source:   "the write-up of codebot's internal/dream (seeds 000): MEMORY.md is injected every turn and cut hard past 200 lines",
		Rule:     "the file as written, every line counted (front matter and blank lines too); past 200 lines the rest is cut; no size limit",
		MaxLines: 200,
		Unit:     UnitBytes,
		count:    rawIndexCount,
		size:     func(text []byte) int { return len(text) },
	}
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

// Recognize is the layout of a memory dir given without --host whose files
// name their agent: the agent whose own bookkeeping (a log it replays, a
// cursor, a file its pipeline generates: what no other agent keeps) dir
// holds, either where the agent keeps it or one folder down (nanobot's
// workspace/memory/ holds its MEMORY.md beside history.jsonl, or the older
// HISTORY.md). The layout's files are then relative to dir. ok is false
// when dir holds no agent's bookkeeping: the caller keeps its default.
func Recognize(dir string) (Layout, bool) {
	for _, h := range bareLayouts() {
		for _, f := range h.Files {
			if filepath.IsAbs(f.Path) || f.Role != RoleLog && f.Role != RoleCursor && f.Role != RoleGenerated {
				continue
			}
			mark := literalPrefix(f.Path)
			for prefix := ""; ; {
				if rel, ok := strings.CutPrefix(mark, prefix); ok && rel != "" && holds(dir, rel, mark != f.Path) {
					if l := rerooted(h, prefix, dir, rel); l.holdsMemory() {
						return l, true
					}
				}
				i := strings.IndexByte(mark[len(prefix):], '/')
				if i < 0 {
					break
				}
				prefix = mark[:len(prefix)+i+1]
			}
		}
	}
	return Layout{}, false
}

// holds reports whether dir has rel: a folder where the layout names a
// pattern's folder, else a regular file (nanobot's cursor is a file; the
// .cursor folder a code editor keeps is not one).
func holds(dir, rel string, folder bool) bool {
	info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil && (folder && info.IsDir() || !folder && info.Mode().IsRegular())
}

// holdsMemory reports whether one of the files a dream may write is there:
// bookkeeping alone, without the memory it keeps, names no agent.
func (l Layout) holdsMemory() bool {
	for _, f := range l.Files {
		if f.Writable && !strings.ContainsAny(f.Path, "*?[") && holds(l.MemoryDir, f.Path, false) {
			return true
		}
	}
	return false
}

// bareLayouts are the registry's layouts resolved against nothing (no
// home, no repository), for their file roles only.
var bareLayouts = sync.OnceValue(func() []Layout {
	var out []Layout
	for _, h := range hosts {
		if l, err := Resolve(h.name, string(filepath.Separator), string(filepath.Separator), nil); err == nil {
			out = append(out, l)
		}
	}
	return out
})

// literalPrefix is a file pattern up to its first path element with a
// wildcard ("rollout_summaries/**" is "rollout_summaries").
func literalPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, "*?["); i >= 0 {
		pattern = strings.TrimSuffix(pattern[:strings.LastIndexByte(pattern[:i], '/')+1], "/")
	}
	return pattern
}

// rerooted is l for a dir that is l's memory dir (prefix "") or its folder
// prefix: the files under prefix, relative to it.
func rerooted(l Layout, prefix, dir, mark string) Layout {
	out := Layout{Host: l.Host, MemoryDir: dir, Notes: fmt.Sprintf("%s, recognised by its %s", l.Host, mark)}
	for _, f := range l.Files {
		if rel, ok := strings.CutPrefix(f.Path, prefix); ok && !filepath.IsAbs(f.Path) {
			f.Path = rel
			out.Files = append(out.Files, f)
		}
	}
	out.source("host", l.Host, "recognised: "+mark+" in the memory dir")
	return out
}
