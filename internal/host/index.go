package host

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
)

// IndexLimit is how an agent loads its index (the file it puts into every
// prompt) and where it cuts it: what it counts as a line and as a byte, and
// how many it keeps. A dream keeps the index within it counted exactly so:
// counted any other way, either lines the agent never sees stay past the
// cut, or lines it does see are moved out for nothing.
type IndexLimit struct {
	// Agent is the agent and the version the rule was read from.
	Agent string `json:"agent"`
	// Source says where the rule was read.
	Source string `json:"source"`
	// Rule says in words what is counted and what is cut.
	Rule string `json:"rule"`
	// MaxLines and MaxBytes are what the agent keeps of the counted text;
	// MaxBytes is 0 for an agent that cuts by lines only.
	MaxLines int `json:"max_lines"`
	MaxBytes int `json:"max_bytes,omitempty"`
	count    func(src []byte) (lines, bytes int)
}

// Count measures an index as the agent counts it: lines is how many lines
// it must load for nothing to be cut (blank lines past the last line that
// holds anything cost nothing), bytes the size of what it loads.
func (l IndexLimit) Count(src []byte) (lines, bytes int) { return l.count(src) }

// Fits reports whether an index of lines and bytes (as Count gives them)
// loads whole.
func (l IndexLimit) Fits(lines, bytes int) bool {
	return lines <= l.MaxLines && (l.MaxBytes == 0 || bytes <= l.MaxBytes)
}

// Summary is the limit in a few words, for a listing of the agent's files.
func (l IndexLimit) Summary() string {
	s := fmt.Sprintf("first %d lines", l.MaxLines)
	if l.MaxBytes > 0 {
		s += fmt.Sprintf(", then %d bytes", l.MaxBytes)
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
	var agents, rules, sources []string
	for _, h := range hosts {
		if h.index != nil {
			l := h.index()
			all, agents = append(all, l), append(agents, l.Agent)
			rules, sources = append(rules, l.Agent+": "+l.Rule), append(sources, l.Agent+": "+l.Source)
		}
	}
	strict := IndexLimit{
		Agent:  "every agent that keeps a MEMORY.md index (" + strings.Join(agents, ", ") + ")",
		Source: "no --host named the agent, so each one's own rule; " + strings.Join(sources, "; "),
		Rule:   "counted as each of them counts, the larger count held to the smaller limit; " + strings.Join(rules, "; "),
		count: func(src []byte) (lines, bytes int) {
			for _, l := range all {
				n, b := l.count(src)
				lines, bytes = max(lines, n), max(bytes, b)
			}
			return lines, bytes
		},
	}
	for _, l := range all {
		if strict.MaxLines == 0 || l.MaxLines < strict.MaxLines {
			strict.MaxLines = l.MaxLines
		}
		if l.MaxBytes > 0 && (strict.MaxBytes == 0 || l.MaxBytes < strict.MaxBytes) {
			strict.MaxBytes = l.MaxBytes
		}
	}
	return strict, len(all) > 0
}

// claudeIndexLimit is Claude Code's loading of MEMORY.md: the text without
// its front matter and HTML comments, trimmed, split on newlines; past 200
// lines only the first 200 are loaded, blank lines counting, and the result
// is then cut at 25,000 bytes at a line end, with a warning.
func claudeIndexLimit() IndexLimit {
	return IndexLimit{
		Agent:    "Claude Code 2.1.197",
		Source:   "its own MEMORY.md loading function (the @anthropic-ai/claude-code 2.1.197 package, read for issue 28)",
		Rule:     "front matter and HTML comments removed, the rest trimmed and split on newlines; past 200 lines only the first 200 load (blank lines count), then the text is cut at 25,000 bytes at a line end",
		MaxLines: 200,
		MaxBytes: 25000,
		count:    claudeIndexCount,
	}
}

func claudeIndexCount(src []byte) (lines, bytes int) {
	s := strings.TrimFunc(withoutHTMLComments(withoutFrontmatter(string(src))), isJSSpace)
	if s == "" {
		return 0, 0
	}
	return strings.Count(s, "\n") + 1, len(s)
}

// withoutFrontmatter drops a leading "---" block closed by a "---" line.
func withoutFrontmatter(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok || strings.TrimRight(first, " \t\r") != "---" {
		return s
	}
	for at := 0; at < len(rest); {
		line, _, _ := strings.Cut(rest[at:], "\n")
		next := at + len(line) + 1
		if strings.TrimRight(line, " \t\r") == "---" {
			return rest[min(next, len(rest)):]
		}
		at = next
	}
	return s
}

// withoutHTMLComments removes every closed <!-- ... --> (an unclosed one
// stays, as a non-greedy pattern leaves it).
func withoutHTMLComments(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i+4+j+3:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s)
	return b.String()
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
		Rule:     "the file as written, every line counted (front matter and blank lines too); past 200 lines the rest is cut; no byte limit",
		MaxLines: 200,
		count:    rawIndexCount,
	}
}

// rawIndexCount counts lines as written: up to the last line that holds
// anything but white space.
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
