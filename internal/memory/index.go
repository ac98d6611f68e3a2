package memory

import (
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
)

// pointerRE matches a list item whose content starts with a markdown link:
// "- [Title](target) — hook". The optional link title ("...") is allowed and
// discarded. Ordered list markers count too, since people renumber indexes.
var pointerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:[-*+]|\d{1,4}[.)])\s+\[([^\]]*)\]\(\s*(?:<([^<>\n]*)>|([^)\s]*))(?:\s+"[^"]*")?\s*\)(.*)$`)
})

// ParseIndex splits MEMORY.md into lines and recognises pointer lines. It
// never fails: a line that is not a pointer is kept with IsPointer false.
func ParseIndex(data []byte) *Index {
	idx := &Index{Bytes: len(data)}
	for i, raw := range SplitLines(string(data)) {
		idx.Lines = append(idx.Lines, ParseIndexLine(i+1, raw))
	}
	return idx
}

// ParseIndexLine parses one index line; n is its 1-based line number.
func ParseIndexLine(n int, raw string) IndexLine {
	l := IndexLine{Line: n, Raw: raw}
	m := pointerRE().FindStringSubmatch(raw)
	if m == nil {
		return l
	}
	target := m[2] + m[3] // the <angle-bracketed> or the bare form
	if strings.TrimSpace(target) == "" {
		return l
	}
	l.IsPointer = true
	l.Title = strings.TrimSpace(m[1])
	l.Target = target
	l.Hook = trimHookSeparator(m[4])
	return l
}

// trimHookSeparator removes the separator people put between a link and its
// hook: an em dash, an en dash, one or two hyphens or a colon.
func trimHookSeparator(s string) string {
	s = strings.TrimSpace(s)
	for _, sep := range []string{"—", "–", "--", "-", ":"} {
		if strings.HasPrefix(s, sep) {
			return strings.TrimSpace(s[len(sep):])
		}
	}
	return s
}

// SplitLines splits text into lines without their endings ("\n" or "\r\n").
// A final line ending does not start an extra empty line, so joining the
// result with "\n" and adding one back reproduces a "\n"-terminated file.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// LocalTarget reports whether a pointer target names a file inside the
// memory directory and returns it cleaned, relative, with forward slashes and
// without any #fragment or ?query. URLs, absolute paths and targets that
// climb out of the directory are not local: nothing about them can be
// checked mechanically.
func LocalTarget(target string) (string, bool) {
	t := strings.TrimSpace(target)
	if t == "" || strings.HasPrefix(t, "#") {
		return "", false
	}
	// A file name people write by hand may hold a bare "%" that url.Parse
	// rejects; only a URL-looking target is ruled out by a parse error.
	if u, err := url.Parse(t); err != nil && strings.Contains(t, "://") || err == nil && (u.Scheme != "" || u.Host != "") {
		return "", false
	}
	if i := strings.IndexAny(t, "#?"); i >= 0 {
		t = t[:i]
	}
	if dec, err := url.PathUnescape(t); err == nil {
		t = dec
	}
	t = strings.ReplaceAll(t, "\\", "/")
	if t == "" || strings.HasPrefix(t, "/") {
		return "", false
	}
	t = path.Clean(t)
	if t == "." || t == ".." || strings.HasPrefix(t, "../") {
		return "", false
	}
	return t, true
}
