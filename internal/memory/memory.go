// Package memory reads an agent's memory directory in the Claude Code
// auto-memory layout: a MEMORY.md index of one-line pointers
// ("- [Title](file.md) — hook") plus topic files that open with a YAML
// frontmatter (name, description, type) and continue in markdown.
//
// Parsing is deliberately tolerant. Memory is written by models and people,
// so a malformed frontmatter or an index with no links at all (nanobot keeps
// its whole memory in one MEMORY.md) is data to work with, never an error.
// Only I/O failures are errors.
package memory

import "github.com/dreamkit/dream/internal/lock"

// Names and line lengths of the memory layout. What an agent loads of the
// index, and where it cuts it, is the agent's own rule: indexcount.Of.
const (
	// IndexFile is the name of the index at the root of a memory directory.
	IndexFile = "MEMORY.md"
	// LockFile is the consolidation lock; it is not memory and never parsed.
	LockFile = lock.FileName
	// MaxIndexLineChars is the length past which an index line is considered
	// too long to be a pointer.
	MaxIndexLineChars = 200
	// PointerTargetChars is the length a pointer line should aim for.
	PointerTargetChars = 150
)

// IndexLine is one line of MEMORY.md.
type IndexLine struct {
	// Line is the 1-based line number.
	Line int
	// Raw is the line without its line ending.
	Raw string
	// Title, Target and Hook are set when IsPointer: the link text, the link
	// destination as written, and the text after the link with its separator
	// (an em dash, en dash, hyphen or colon) removed.
	Title, Target, Hook string
	// IsPointer is true for a list item that starts with a markdown link.
	IsPointer bool
}

// Index is a parsed MEMORY.md.
type Index struct {
	Lines []IndexLine
	// Bytes is the size of the file as read.
	Bytes int
}

// Topic is one markdown file of the memory directory other than MEMORY.md.
type Topic struct {
	// Path is relative to the memory root, with forward slashes.
	Path string
	// Name, Description and Type come from the frontmatter.
	Name, Description, Type string
	// Frontmatter is true when the file opens with a well-formed "---" block.
	Frontmatter bool
	// Fields holds every scalar key of the frontmatter, so that callers can
	// read fields this package does not name (date, updated, ...).
	Fields map[string]string
	// Body is the text after the frontmatter (the whole file without one).
	Body string
	// BodyLine is the 1-based line number of Raw at which Body starts.
	BodyLine int
	// Raw is the file as read.
	Raw []byte
}

// Dir is a loaded memory directory.
type Dir struct {
	// Root is the directory as given to Load.
	Root string
	// Index is nil when the directory has no MEMORY.md.
	Index *Index
	// Topics are sorted by Path.
	Topics []Topic
	// Other lists files that are neither MEMORY.md nor markdown nor hidden,
	// relative to Root with forward slashes, sorted. They are kept so that a
	// caller can tell "missing" from "not markdown".
	Other []string
}

// Topic returns the topic with the given relative path, or nil.
func (d *Dir) Topic(path string) *Topic {
	for i := range d.Topics {
		if d.Topics[i].Path == path {
			return &d.Topics[i]
		}
	}
	return nil
}
