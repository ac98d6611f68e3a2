package host

import (
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func utf8ValidString(s string) bool { return utf8.ValidString(s) }

// FuzzSanitizeProjectName checks the name Claude Code would give a project
// directory: only ASCII letters, digits and '-', one character per UTF-16
// code unit of the input (invalid UTF-8 bytes count one each).
func FuzzSanitizeProjectName(f *testing.F) {
	for _, s := range []string{"/Users/dev/my_project", "/é", "/😀", "/a\xffb", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := sanitizeProjectName(s)
		units := 0
		for _, r := range s { // invalid bytes decode as U+FFFD, one unit
			units += utf16.RuneLen(r)
		}
		if len(got) != units {
			t.Fatalf("sanitizeProjectName(%q) = %q: %d chars, want %d", s, got, len(got), units)
		}
		for _, c := range []byte(got) {
			if !(c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				t.Fatalf("sanitizeProjectName(%q) = %q holds %q", s, got, c)
			}
		}
	})
}

// FuzzParseGitFile: whatever a .git file says, the main checkout found is an
// absolute, clean path whose .git/worktrees the file pointed into.
func FuzzParseGitFile(f *testing.F) {
	for _, s := range []string{
		"gitdir: /src/app/.git/worktrees/wt\n",
		"gitdir: ../app/.git/worktrees/wt",
		"gitdir: /src/app/.git/modules/sub",
		"gitdir: /srv/bare.git/worktrees/x",
		"nonsense",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		dir := filepath.FromSlash("/src/wt")
		main, ok := parseGitFile(content, dir)
		if !ok {
			return
		}
		if !filepath.IsAbs(main) || filepath.Clean(main) != main {
			t.Fatalf("parseGitFile(%q) = %q: not absolute and clean", content, main)
		}
	})
}

// FuzzParseCodexMemory: any input parses or fails with a line, never
// panics; a file that parses keeps parsing with its first block's body
// edited (what the edit guard allows).
func FuzzParseCodexMemory(f *testing.F) {
	f.Add("---\nrollout_summary_files:\n  - a.md (cwd=/r, updated_at=t)\ndescription: d\nkeywords: k\n---\n\n- x\n- x\n")
	f.Add("---\n---\n")
	f.Add("\n---\nrollout_summary_file: a.md\ndescription: d\nkeywords: k\n---")
	f.Fuzz(func(t *testing.T, s string) {
		blocks, err := ParseCodexMemory(s)
		if err != nil {
			var fe *FormatError
			if !errorsAs(err, &fe) {
				t.Fatalf("error %v is not a FormatError", err)
			}
			return
		}
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString("---\n" + bl.Header + "\n---\n" + bl.Body)
		}
		again, err := ParseCodexMemory(b.String())
		if err != nil || len(again) != len(blocks) {
			t.Fatalf("re-rendered blocks do not parse: %v (%d vs %d)\n%q", err, len(again), len(blocks), b.String())
		}
	})
}

// FuzzSectionSpan: the span is inside the text and starts after the
// heading.
func FuzzSectionSpan(f *testing.F) {
	f.Add("# A\n## Gemini Added Memories\n- x\n## B\n")
	f.Add("## Gemini Added Memories")
	f.Fuzz(func(t *testing.T, s string) {
		start, end, ok := SectionSpan(s, geminiMemorySection)
		if !ok {
			return
		}
		if start < len(geminiMemorySection) || start > end || end > len(s) {
			t.Fatalf("span %d..%d of %d", start, end, len(s))
		}
	})
}

// FuzzNanobotKey: a key's storage stem always decodes back to the key.
func FuzzNanobotKey(f *testing.F) {
	for _, k := range []string{"cli:direct", "telegram:123456789", "飞书:群聊", "a"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if !isPrintableKey([]byte(key)) || !utf8ValidString(key) {
			return
		}
		stem := base64.RawURLEncoding.EncodeToString([]byte(key))
		if got := nanobotKey(stem); got != key {
			t.Fatalf("nanobotKey(%q) = %q, want %q", stem, got, key)
		}
	})
}
