package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeIndexWarning starts the line Claude 2.1.197 appends to an index it
// cut ("\n\n> WARNING: MEMORY.md is ... Only part of it was loaded. ...").
const claudeIndexWarning = "\n\n> WARNING: MEMORY.md is "

// indexFixture is one MEMORY.md and what Claude 2.1.197 is expected to send
// of it, from its cli.js (ypp, gpp, Nca, iUt): front matter removed (the
// regex /^---\s*\n([\s\S]*?)---\s*\n?/), block-level HTML comments removed
// (marked's lexer; a comment inside a paragraph or list item stays), the
// rest trimmed, split on "\n"; past 200 lines the first 200 are kept
// (blank lines count); then, past 25,000 UTF-16 code units (JavaScript's
// String length, not bytes), it is cut at the last "\n" at or before
// 25,000; a warning line is appended when either limit cut it.
type indexFixture struct {
	name, src string
	// loaded is what Claude sends before any warning.
	loaded string
	// warning is the text of the warning after "MEMORY.md is ", "" for none.
	warning string
}

func indexFixtures() []indexFixture {
	var fx []indexFixture

	// 201 lines, some blank: the blank lines count.
	var lines []string
	lines = append(lines, "# Memory")
	for i := 1; i <= 200; i++ {
		if i%10 == 5 {
			lines = append(lines, "")
			continue
		}
		lines = append(lines, fmt.Sprintf("- fact %d: the build of service %d runs make ship-%d", i, i, i))
	}
	src := strings.Join(lines, "\n") + "\n"
	fx = append(fx, indexFixture{name: "201 lines with blank lines", src: src,
		loaded: strings.Join(lines[:200], "\n"), warning: "201 lines (limit: 200)"})

	// 25 KB in 110 lines, each with an em dash (three bytes, one UTF-16
	// unit): cut at the last line end at or before 25,000 units, which is
	// one line later than 25,000 bytes would be.
	lines = nil
	for i := 1; i <= 110; i++ {
		lines = append(lines, fmt.Sprintf("- fact %d — %s", i, strings.Repeat("x", 215)))
	}
	src = strings.Join(lines, "\n") + "\n"
	fx = append(fx, indexFixture{name: "25 KB index", src: src, loaded: cutAtUnits(src, 25000), warning: "KB (limit: 24.4KB) — index entries are too long"})

	// 190 pointers under 34 lines of front matter: 224 lines on disk,
	// 190 loaded, no cut.
	var body []string
	for i := 1; i <= 190; i++ {
		body = append(body, fmt.Sprintf("- fact %d: the build of service %d runs make ship-%d", i, i, i))
	}
	front := "---\nname: index\ndescription: the memory's index\n"
	for i := 0; i < 30; i++ {
		front += fmt.Sprintf("key%d: value %d\n", i, i)
	}
	front += "---\n"
	fx = append(fx, indexFixture{name: "front matter, 224 lines on disk",
		src: front + strings.Join(body, "\n") + "\n", loaded: strings.Join(body, "\n")})

	// 190 pointers under a 32-line block comment, one with an inline
	// comment, which stays.
	withInline := append([]string(nil), body...)
	withInline[4] += " <!-- inline note -->"
	comment := "<!--\n" + strings.Repeat("a comment line\n", 30) + "-->\n"
	fx = append(fx, indexFixture{name: "HTML comments, 222 lines on disk",
		src: comment + strings.Join(withInline, "\n") + "\n", loaded: strings.Join(withInline, "\n")})

	// Over 25,000 bytes, under 25,000 UTF-16 code units: loaded whole.
	lines = nil
	for i := 1; i <= 180; i++ {
		lines = append(lines, fmt.Sprintf("- fait %d : %s", i, strings.Repeat("é", 80)))
	}
	src = strings.Join(lines, "\n") + "\n"
	fx = append(fx, indexFixture{name: "multi-byte, 31 KB, 16,812 UTF-16 units", src: src,
		loaded: strings.TrimSpace(src)})
	return fx
}

// TestClaudeIndexLimits: for each index, two checks. What the real Claude
// sends to the model is what the rule above says. And dream counts the way
// Claude does: after an offline dream, an index Claude had cut is loaded
// whole, and an index Claude loaded whole has no line moved out of it.
func TestClaudeIndexLimits(t *testing.T) {
	requireAgent(t, "claude")
	for _, fx := range indexFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			s, a := claudeSandbox(t, true)
			st := firstClaudeSession(t, s, a)
			index := filepath.Join(st.MemoryDir, "MEMORY.md")
			s.WriteFile(index, fx.src)
			t.Logf("MEMORY.md: %d lines, %d bytes, %d UTF-16 units", strings.Count(fx.src, "\n"), len(fx.src), utf16Len(fx.src))

			t.Run("Claude loads it by the rule", func(t *testing.T) {
				check(t, a, "index "+fx.name+": Claude loads it by the rule")
				claudePrint(s, a, "hello")
				turn := lastClaudeTurn(t, s)
				loaded, warning, cut := strings.Cut(turn.Index, claudeIndexWarning)
				if loaded != fx.loaded {
					t.Errorf("Claude loaded %d lines, %d units; the rule says %d lines, %d units\nfirst difference at byte %d",
						strings.Count(loaded, "\n")+1, utf16Len(loaded), strings.Count(fx.loaded, "\n")+1, utf16Len(fx.loaded), firstDiff(loaded, fx.loaded))
				}
				switch {
				case fx.warning == "" && cut:
					t.Errorf("Claude warned: %q", warning)
				case fx.warning != "" && (!cut || !strings.Contains(warning, fx.warning)):
					t.Errorf("Claude's warning %q (cut %v), want one containing %q", warning, cut, fx.warning)
				}
				t.Logf("Claude loaded %d lines, %d UTF-16 units; warning: %q", strings.Count(loaded, "\n")+1, utf16Len(loaded), warning)
			})

			t.Run("dream counts it as Claude does", func(t *testing.T) {
				check(t, a, "index "+fx.name+": dream counts it as Claude does")
				var run struct {
					Status       string   `json:"status"`
					FilesTouched []string `json:"files_touched"`
				}
				s.DreamJSON(&run, "run", "--host", "claude", "--provider", "offline")
				after := s.ReadFile(index)
				t.Logf("offline dream: %s, touched %v; MEMORY.md now %d lines, %d bytes", run.Status, run.FilesTouched, strings.Count(after, "\n"), len(after))
				claudePrint(s, a, "hello")
				again := lastClaudeTurn(t, s)
				if _, w, cut := strings.Cut(again.Index, claudeIndexWarning); cut {
					t.Errorf("after dream's dream Claude still cuts the index (%q): dream counted it within the limits, Claude does not", w)
				}
				if fx.warning == "" {
					if _, err := os.Stat(filepath.Join(st.MemoryDir, "index-overflow.md")); err == nil || after != fx.src {
						t.Errorf("Claude loads this index whole, yet dream's dream moved lines out of it (dream counts it over the limits)")
					}
				}
			})
		})
	}
}

// cutAtUnits is s cut as JavaScript's lastIndexOf("\n", n) cuts: at the
// last line end whose UTF-16 index is at most n.
func cutAtUnits(s string, n int) string {
	units, last := 0, -1
	for i, r := range s {
		if units > n {
			break
		}
		if r == '\n' {
			last = i
		}
		units += utf16Len(string(r))
	}
	return s[:last]
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
