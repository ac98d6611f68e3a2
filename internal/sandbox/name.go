package sandbox

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/fsutil"
)

// ErrBadName reports a file name dream will not create: one with control
// characters or invalid UTF-8, or one reserved for dream's own bookkeeping.
// Such names break what is built from them later (the index links, the audit
// diff headers, an undo that parses them back), and a name the journal
// reserves would be written and then silently dropped by the commit.
var ErrBadName = errors.New("file name not allowed")

// CheckName refuses a memory path (slash-separated, relative to the memory
// dir) whose components dream could not carry through its index, journal
// and audit history unchanged. The message says what to do instead, so the
// model can correct its call.
func CheckName(rel string) error {
	if !utf8.ValidString(rel) {
		return fmt.Errorf("%w: %q is not valid UTF-8; use a plain name such as topic-name.md", ErrBadName, rel)
	}
	for _, r := range rel {
		if r == utf8.RuneError {
			return fmt.Errorf("%w: %q contains U+FFFD, the stand-in for bytes that were not valid UTF-8; use a plain name such as topic-name.md", ErrBadName, rel)
		}
		if isControl(r) {
			return fmt.Errorf("%w: %q contains the control character %U (newlines, tabs and other control characters are refused); use a plain name such as topic-name.md",
				ErrBadName, rel, r)
		}
	}
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		if i < len(parts)-1 && strings.EqualFold(path.Ext(part), ".md") {
			return fmt.Errorf("%w: %q would be a directory named like a memory file, which the index and the agents that load memory take for a file; use a directory name without .md",
				ErrBadName, strings.Join(parts[:i+1], "/"))
		}
		if reservedName(part) {
			return fmt.Errorf("%w: names starting with %s are dream's temporary files and are never kept; choose another name",
				ErrBadName, fsutil.TempPrefix)
		}
		if strings.TrimSpace(part) != part {
			return fmt.Errorf("%w: %q starts or ends with white space; trim it", ErrBadName, part)
		}
	}
	return nil
}

// isControl is a Unicode control character (C0, DEL, C1) or a line or
// paragraph separator, which some renderers and parsers treat as a newline.
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError
}

// reservedName reports a name dream's own commit machinery owns: the shared
// temporary-file prefix, which the journal skips when it stages and commits
// (so a file so named would be reported written and then lost) and which the
// sandbox's own temporary files carry too. Letter case is ignored because a
// case-insensitive file system maps the two spellings onto one file.
func reservedName(part string) bool {
	return strings.HasPrefix(strings.ToLower(part), strings.ToLower(fsutil.TempPrefix))
}

// SafeName renders a name found on disk for display to the model: names
// that are plain are returned as they are; names with control characters
// or invalid UTF-8 are quoted Go-style so that one entry stays one line and
// the model sees exactly which bytes are there.
func SafeName(name string) string {
	if !utf8.ValidString(name) {
		return fmt.Sprintf("%q", name)
	}
	for _, r := range name {
		if isControl(r) {
			return fmt.Sprintf("%q", name)
		}
	}
	return name
}
