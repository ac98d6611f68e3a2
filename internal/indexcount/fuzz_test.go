package indexcount

import (
	"testing"
	"unicode/utf8"
)

// FuzzClaudeIndexCount checks the count of any MEMORY.md as Claude Code
// loads it: no panic on any bytes, a valid string, and a size no larger
// than the whole file's in UTF-16 code units (removing front matter and
// comments, folding "\r\n" and trimming only take away); no lines, no size.
func FuzzClaudeIndexCount(f *testing.F) {
	for _, s := range []string{"", "---\nname: x --- y\nrest\n", "Para\n  <!-- a -->\n<!-- b -->\r\nx", "\ufeff<!-- c -->", "<!--", "a\xe2\x82b\xff", "> q\n  <!-- c\n-->\n\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		text := claudeIndexText(src)
		lines, size := claudeIndexCount(src)
		if !utf8.ValidString(text) || size > utf16Len(jsString(src)) || (lines == 0) != (size == 0) || size != utf16Len(text) {
			t.Fatalf("%q: %d lines, %d units of %q", src, lines, size, text)
		}
	})
}
