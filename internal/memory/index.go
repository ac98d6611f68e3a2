package memory

import (
	"net/url"
	"path"
	"strings"
)

// A pointer is a list item whose content starts with a markdown link:
// "- [Title](target) — hook". The optional link title ("...") is allowed and
// discarded. Ordered list markers count too, since people renumber indexes.
// The grammar is the regular expression
//
//	^\s*(?:[-*+]|\d{1,4}[.)])\s+\[([^\]]*)\]\(\s*(?:<([^<>\n]*)>|([^)\s]*))(?:\s+"[^"]*")?\s*\)(.*)$
//
// matched by hand (matchPointer): an index is thousands of such lines, and
// the regular expression took over a microsecond for each.
// FuzzMatchPointer holds matchPointer to that expression, groups included.

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
	title, target, rest, ok := matchPointer(raw)
	if !ok || strings.TrimSpace(target) == "" {
		return l
	}
	l.IsPointer = true
	l.Title = strings.TrimSpace(title)
	l.Target = target
	l.Hook = trimHookSeparator(rest)
	return l
}

// isSpaceRE is \s of Go's regular expressions: ASCII space, \t, \n, \f, \r.
func isSpaceRE(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// matchPointer matches raw against the pointer grammar the way the regular
// expression does (leftmost-first: where it could match in more than one
// way, the first way in its order of preference wins), and returns its
// groups: the link text, the target (the <angle-bracketed> or the bare
// form) and what follows the link.
func matchPointer(raw string) (title, target, rest string, ok bool) {
	i := 0
	for i < len(raw) && isSpaceRE(raw[i]) {
		i++
	}
	if i == len(raw) {
		return "", "", "", false
	}
	switch c := raw[i]; {
	case c == '-' || c == '*' || c == '+':
		i++
	case c >= '0' && c <= '9':
		k := i
		for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
			k++
		}
		// \d{1,4}[.)]: fewer digits leave a digit where [.)] must be.
		if k-i > 4 || k == len(raw) || raw[k] != '.' && raw[k] != ')' {
			return "", "", "", false
		}
		i = k + 1
	default:
		return "", "", "", false
	}
	k := i
	for k < len(raw) && isSpaceRE(raw[k]) {
		k++
	}
	if k == i || k == len(raw) || raw[k] != '[' {
		return "", "", "", false // \s+ then \[
	}
	end := strings.IndexByte(raw[k+1:], ']')
	if end < 0 {
		return "", "", "", false
	}
	title = raw[k+1 : k+1+end]
	open := k + 1 + end + 1 // just past ']'
	if open == len(raw) || raw[open] != '(' {
		return "", "", "", false
	}
	p := open + 1
	sp := p
	for sp < len(raw) && isSpaceRE(raw[sp]) {
		sp++
	}
	// \s* gives back its spaces one by one, most first.
	for q := sp; q >= p; q-- {
		if q < len(raw) && raw[q] == '<' {
			// <([^<>\n]*)>: the class holds neither '>' nor its stops, so
			// only the longest run can be followed by '>'.
			j := q + 1
			for j < len(raw) && raw[j] != '<' && raw[j] != '>' && raw[j] != '\n' {
				j++
			}
			if j < len(raw) && raw[j] == '>' {
				if r, ok := afterTarget(raw, j+1); ok {
					return title, raw[q+1 : j], r, true
				}
			}
		}
		// ([^)\s]*): longest first, then shorter.
		m := q
		for m < len(raw) && raw[m] != ')' && !isSpaceRE(raw[m]) {
			m++
		}
		for t := m; t >= q; t-- {
			if r, ok := afterTarget(raw, t); ok {
				return title, raw[q:t], r, true
			}
		}
	}
	return "", "", "", false
}

// afterTarget matches (?:\s+"[^"]*")?\s*\)(.*)$ at raw[t:] and returns
// the last group.
func afterTarget(raw string, t int) (string, bool) {
	// The optional link title first, as the greedy ? tries it first.
	k := t
	for k < len(raw) && isSpaceRE(raw[k]) {
		k++
	}
	if k > t && k < len(raw) && raw[k] == '"' {
		if e := strings.IndexByte(raw[k+1:], '"'); e >= 0 {
			if r, ok := closeParen(raw, k+1+e+1); ok {
				return r, true
			}
		}
	}
	return closeParen(raw, t)
}

// closeParen matches \s*\)(.*)$ at raw[t:]: spaces, the closing
// parenthesis, and a rest without a line break (. stops at \n, $ is the
// end of the text).
func closeParen(raw string, t int) (string, bool) {
	for t < len(raw) && isSpaceRE(raw[t]) {
		t++
	}
	if t == len(raw) || raw[t] != ')' {
		return "", false
	}
	rest := raw[t+1:]
	if strings.IndexByte(rest, '\n') >= 0 {
		return "", false
	}
	return rest, true
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
