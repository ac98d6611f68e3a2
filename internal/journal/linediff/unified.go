package linediff

import (
	"fmt"
	"strconv"
	"strings"
)

// Context is the number of unchanged lines shown around each change, git's
// default.
const Context = 3

// File describes one side of a file diff. Absent marks a file that does not
// exist on that side (created or deleted), which git writes as /dev/null.
type File struct {
	Path   string
	Data   []byte
	Absent bool
	// Opaque marks a file too large to load: it is shown as binary and
	// Data is not read.
	Opaque bool
}

// Unified writes a git-style unified diff of one file from old to new, with
// "diff --git", "a/" and "b/" headers, so the output can be read by people
// and applied with `git apply`. It returns "" when the two sides are equal.
func Unified(old, new File) string {
	if !old.Opaque && !new.Opaque && old.Absent == new.Absent && string(old.Data) == string(new.Data) {
		return ""
	}
	var sb strings.Builder
	aName, bName := "a/"+old.Path, "b/"+new.Path
	fmt.Fprintf(&sb, "diff --git %s %s\n", quote(aName), quote(bName))
	switch {
	case old.Absent:
		sb.WriteString("new file mode 100644\n")
		aName = "/dev/null"
	case new.Absent:
		sb.WriteString("deleted file mode 100644\n")
		bName = "/dev/null"
	}
	if old.Opaque || new.Opaque || IsBinary(old.Data) || IsBinary(new.Data) {
		fmt.Fprintf(&sb, "Binary files %s and %s differ\n", quote(aName), quote(bName))
		return sb.String()
	}
	a, b := Split(old.Data), Split(new.Data)
	spans := Diff(a, b)
	if len(spans) == 0 {
		// Only possible for an empty file created or deleted: git shows
		// the header alone.
		return sb.String()
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", quote(aName), quote(bName))
	for _, h := range hunks(spans, len(a), len(b)) {
		writeHunk(&sb, h, a, b)
	}
	return sb.String()
}

// hunk is a group of spans close enough to share context lines.
type hunk struct {
	a0, a1, b0, b1 int
	spans          []Span
}

func hunks(spans []Span, n, m int) []hunk {
	var out []hunk
	for _, s := range spans {
		if len(out) > 0 {
			last := &out[len(out)-1]
			prev := last.spans[len(last.spans)-1]
			if s.A0-prev.A1 <= 2*Context {
				last.spans = append(last.spans, s)
				last.a1 = min(n, s.A1+Context)
				last.b1 = min(m, s.B1+Context)
				continue
			}
		}
		out = append(out, hunk{
			a0: max(0, s.A0-Context), a1: min(n, s.A1+Context),
			b0: max(0, s.B0-Context), b1: min(m, s.B1+Context),
			spans: []Span{s},
		})
	}
	return out
}

func writeHunk(sb *strings.Builder, h hunk, a, b []string) {
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", rangeOf(h.a0, h.a1-h.a0), rangeOf(h.b0, h.b1-h.b0))
	i := h.a0
	for _, s := range h.spans {
		for ; i < s.A0; i++ {
			writeLine(sb, ' ', a[i])
		}
		for _, l := range a[s.A0:s.A1] {
			writeLine(sb, '-', l)
		}
		for _, l := range b[s.B0:s.B1] {
			writeLine(sb, '+', l)
		}
		i = s.A1
	}
	for ; i < h.a1; i++ {
		writeLine(sb, ' ', a[i])
	}
}

// rangeOf formats a hunk range the way git does: an empty range names the
// line before it, and a count of one is left out.
func rangeOf(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(count)
}

func writeLine(sb *strings.Builder, prefix byte, line string) {
	sb.WriteByte(prefix)
	sb.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		sb.WriteString("\n\\ No newline at end of file\n")
	}
}

// quote C-quotes a path the way git does when it holds a double quote, a
// backslash or a control character, so such names stay unambiguous.
func quote(p string) string {
	if !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' || r == 0x7f }) {
		return p
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&sb, `\%03o`, c)
			} else {
				sb.WriteByte(c)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
