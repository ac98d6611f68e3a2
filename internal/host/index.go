package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// for nothing. The counting itself is package indexcount's (indexcount.Of):
// Claude Code's needs a Markdown parser, which this package must not
// import (see indexcount's doc).
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
}

// Fits reports whether an index of lines and size (as indexcount's Count
// gives them) loads whole.
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
// an agent that keeps none, and for no agent named: the limit of a bare
// --memory-dir, which must fit every agent, is indexcount.Of("").
func IndexLimitOf(name string) (IndexLimit, bool) {
	for _, h := range hosts {
		if h.name == name && h.index != nil {
			return h.index(), true
		}
	}
	return IndexLimit{}, false
}

// claudeIndexLimit is Claude Code's loading of MEMORY.md (indexcount's
// claudeIndexText), then its cut: past 200 lines only the first 200 are
// loaded, blank lines counting, and past 25,000 UTF-16 code units the text
// is cut at a line end, with a warning; a file over 4 MiB on disk is not
// loaded at all.
func claudeIndexLimit() IndexLimit {
	return IndexLimit{
		Agent:        "Claude Code 2.1.197",
		Source:       "read from the @anthropic-ai/claude-code 2.1.197 binary (the code that reads MEMORY.md, strips its front matter and HTML comments, and cuts it) and checked against that binary by dream's conformance suite (conformance/claude_limits_test.go: TestClaudeIndexLimits, TestClaudeIndexCount)",
		Rule:         "the file read as UTF-8; front matter removed (from a first line of \"---\" to the next \"---\", even mid-line, YAML or not); if the text holds \"<!--\", carriage returns made newlines and each top-level HTML comment block removed (a comment in a paragraph, list, quote or code stays); the rest trimmed and split on \"\\n\"; past 200 lines only the first 200 load (blank lines count), then the text is cut at the last line end within 25,000 UTF-16 code units (JavaScript's string length, not bytes); a file over 4,194,304 bytes on disk is not loaded at all",
		MaxLines:     200,
		MaxSize:      25000,
		Unit:         UnitUTF16,
		MaxFileBytes: 4 << 20,
	}
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
	}
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
