package host

import (
	"path/filepath"
	"testing"
	"unicode/utf16"
)

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
