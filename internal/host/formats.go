package host

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormatError is a file that would not load in its agent's format.
type FormatError struct {
	// Path is the file; Line is 1-based, 0 when the whole file is at fault.
	Path string
	Line int
	Msg  string
}

func (e *FormatError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// CheckFormats parses every file the agent loads (l.Files with Loaded, and
// the logs and cursors it replays) in the agent's format and returns one
// error per file that would not load. A file that does not exist is fine:
// agents create them lazily. It is how a test proves that a dream left the
// memory loadable, and how `dream doctor` spots a broken file.
func CheckFormats(l Layout) []error {
	var errs []error
	seen := map[string]bool{}
	for _, f := range l.Files {
		for _, path := range l.expand(f) {
			if seen[path] {
				continue // an earlier, more specific entry governs it
			}
			seen[path] = true
			if !f.Loaded && f.Role != RoleLog && f.Role != RoleCursor {
				continue
			}
			data, err := os.ReadFile(path)
			if err != nil {
				if !os.IsNotExist(err) {
					errs = append(errs, &FormatError{Path: path, Msg: err.Error()})
				}
				continue
			}
			if err := CheckFormat(f, data); err != nil {
				var fe *FormatError
				if e, ok := err.(*FormatError); ok {
					fe = e
				} else {
					fe = &FormatError{Msg: err.Error()}
				}
				fe.Path = path
				errs = append(errs, fe)
			}
		}
	}
	return errs
}

// expand returns the existing files f names: itself, or the matches of its
// pattern below the memory dir (symbolic links are not followed).
func (l Layout) expand(f File) []string {
	if !strings.ContainsAny(f.Path, "*?[") {
		return []string{l.abs(f)}
	}
	var out []string
	_ = filepath.WalkDir(l.MemoryDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if name := d.Name(); path != l.MemoryDir && (name == ".git" || strings.HasPrefix(name, ".dream")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(l.MemoryDir, path)
		if err != nil {
			return nil
		}
		if ok, _ := matchPattern(f.Path, filepath.ToSlash(rel)); ok {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// CheckFormat parses data as f's format.
func CheckFormat(f File, data []byte) error {
	if !utf8.Valid(data) {
		return &FormatError{Msg: "not valid UTF-8"}
	}
	text := string(data)
	switch f.Format {
	case FormatMarkdown, FormatCodexSummary:
		return checkFrontmatter(text)
	case FormatCodexMemoryBlocks:
		_, err := ParseCodexMemory(text)
		return err
	case FormatJSONL:
		return checkJSONL(text)
	case FormatCursor:
		if _, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64); err != nil {
			return &FormatError{Msg: "not a cursor (one integer)"}
		}
	case FormatSection:
		if _, _, ok := SectionSpan(text, f.Section); !ok {
			return &FormatError{Msg: "section " + quote(f.Section) + " missing"}
		}
	}
	return nil
}

// checkFrontmatter: a file that opens YAML frontmatter must close it, or
// the agent reads the whole file as its header.
func checkFrontmatter(text string) error {
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return nil
	}
	rest := text[strings.Index(text, "\n")+1:]
	for i, line := range strings.Split(rest, "\n") {
		if strings.TrimRight(line, "\r \t") == "---" {
			return nil
		}
		if i > 200 {
			break
		}
	}
	return &FormatError{Line: 1, Msg: "frontmatter opened with --- is never closed"}
}

// checkJSONL: every complete line is a JSON object. A last line with no
// newline is a write in progress (the agent appends), so it is allowed to
// be torn.
func checkJSONL(text string) error {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		last := i == len(lines)-1 // no newline after it
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &obj); err != nil && !last {
			return &FormatError{Line: i + 1, Msg: "not a JSON object: " + err.Error()}
		}
	}
	return nil
}

// SectionSpan finds the Markdown section whose heading line is heading
// (compared without trailing space) and returns the byte range of its body:
// from after the heading line to the next heading of the same or a higher
// level, or the end of text.
func SectionSpan(text, heading string) (start, end int, ok bool) {
	level := strings.IndexFunc(heading, func(r rune) bool { return r != '#' })
	if level <= 0 {
		return 0, 0, false
	}
	pos := 0
	inFence := false
	for pos <= len(text) {
		nl := strings.IndexByte(text[pos:], '\n')
		lineEnd := len(text)
		if nl >= 0 {
			lineEnd = pos + nl
		}
		line := strings.TrimRight(text[pos:lineEnd], "\r \t")
		next := lineEnd + 1
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			inFence = !inFence
		}
		if !inFence {
			if !ok && line == heading {
				start, ok = min(next, len(text)), true
			} else if ok {
				if l := headingLevel(line); l > 0 && l <= level {
					return start, pos, true
				}
			}
		}
		if nl < 0 {
			break
		}
		pos = next
	}
	if ok {
		return start, len(text), true
	}
	return 0, 0, false
}

// headingLevel is the ATX heading level of line, 0 if it is not one.
func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(line) && line[n] != ' ' {
		return 0
	}
	return n
}
