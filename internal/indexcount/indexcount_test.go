package indexcount

import (
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/host"
)

// TestIndexLimitCount: each agent's index counted as that agent counts it.
// Claude Code 2.1.197 drops front matter and HTML comment blocks, trims (a
// BOM and the blank lines at either end too), splits on newlines, counts
// blank lines in between, and measures size in UTF-16 code units; codebot
// counts the file as written, up to its last line with anything on it, in
// bytes. With no agent named, the larger line count is held to 200 and
// the size is Claude's, the one agent with a size limit. (Issue 28: the
// engine counted non-blank lines only, so a 201-line index passed for
// 197; issue 29: bytes over-counted a multi-byte index Claude loads whole.)
func TestIndexLimitCount(t *testing.T) {
	lines201 := "# Index\n\n" + strings.Repeat("- [T](t.md) — hook\n", 197) + "\n- [Last](last.md) — the 201st line\n"
	accents := strings.Repeat("- "+strings.Repeat("é", 170)+"\n", 100) // 34,300 bytes, 17,300 units
	for _, tt := range []struct {
		name                   string
		src                    string
		claudeLines, rawLines  int
		claudeSize, rawBytes   int
		claudeFits, strictFits bool
	}{
		{"empty", "", 0, 0, 0, 0, true, true},
		{"blank lines inside count", "a\n\n\nb\n\n", 4, 4, 5, 7, true, true},
		{"front matter", "---\nname: x\n---\n\n# H\n", 1, 5, 3, 21, true, true},
		{"front matter closed mid-line", "---\nname: x --- y\nrest\n", 2, 3, 6, 23, true, true},
		{"unclosed front matter is text", "---\nname: x\n", 2, 2, 11, 12, true, true},
		{"comment blocks", "<!-- a\nb -->\n# H\n<!-- c -->\nx\n", 2, 5, 5, 30, true, true},
		{"an inline comment stays", "# H\nx <!-- c -->\n", 2, 2, 16, 17, true, true},
		{"bom and crlf", "\ufeffa\r\nb\r\n\r\n", 2, 2, 4, 11, true, true},
		{"only space", "   \n\t\n", 0, 0, 0, 6, true, true},
		{"multi-byte", "# Índice\n- café — 東京 😀\n", 2, 2, 23, 34, true, true},
		{"201 lines", lines201, 201, 201, utf16Len(lines201) - 1, len(lines201), false, false},
		{"200 lines after front matter", "---\nname: index\n---\n" + strings.Repeat("- [T](t.md)\n", 200), 200, 203, 200*12 - 1, 20 + 200*12, true, false},
		{"over 25,000 units", strings.Repeat(strings.Repeat("x", 199)+"\n", 126), 126, 126, 126*200 - 1, 126 * 200, false, false},
		{"over 25,000 bytes, not units", accents, 100, 100, 17299, 34300, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			claude, _ := of("claude")
			codebot, _ := of("codebot")
			strict, ok := Of("")
			if !ok {
				t.Fatal("no limit for an unnamed agent")
			}
			if l, n := claude.Count([]byte(tt.src)); l != tt.claudeLines || n != tt.claudeSize || claude.Fits(l, n) != tt.claudeFits {
				t.Errorf("Claude Code: %d lines %d units fits %v; want %d %d %v", l, n, claude.Fits(l, n), tt.claudeLines, tt.claudeSize, tt.claudeFits)
			}
			if l, n := codebot.Count([]byte(tt.src)); l != tt.rawLines || n != tt.rawBytes {
				t.Errorf("codebot: %d lines %d bytes; want %d %d", l, n, tt.rawLines, tt.rawBytes)
			}
			l, n := strict.Count([]byte(tt.src))
			if l != max(tt.claudeLines, tt.rawLines) || n != tt.claudeSize || strict.Fits(l, n) != tt.strictFits {
				t.Errorf("unnamed: %d lines %d units fits %v; want the larger line count, Claude's size, and fits %v", l, n, strict.Fits(l, n), tt.strictFits)
			}
		})
	}
}

// TestClaudeIndexText: MEMORY.md as Claude Code 2.1.197 loads it. Each
// want is what the real Claude sent the fake model server for that file
// (conformance: TestClaudeIndexCount runs the same files through it).
func TestClaudeIndexText(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"front matter", "---\nname: x\n---\n# H\nbody\n", "# H\nbody"},
		{"front matter closed mid-line", "---\nname: x --- y\nrest\n", "y\nrest"},
		{"front matter closed inside a later value", "---\ntitle: a---b\nmore\n---\nbody\n", "b\nmore\n---\nbody"},
		{"empty front matter", "---\n---\nbody\n", "body"},
		{"front matter with blank lines after", "--- \nname: x\n---   \n\n\nbody\n", "body"},
		{"four dashes are no front matter", "----\nx\n---\nbody\n", "----\nx\n---\nbody"},
		{"unclosed front matter", "---\nname: x\nbody\n", "---\nname: x\nbody"},
		{"front matter that is not YAML", "---\n: : [\n---\nbody\n", "body"},
		{"front matter with CRLF", "---\r\nname: x\r\n---\r\nbody\r\nmore\r\n", "body\r\nmore"},
		{"BOM before front matter", "\ufeff---\nname: x\n---\nbody\n", "---\nname: x\n---\nbody"},
		{"BOM before a comment", "\ufeff<!-- c -->\nbody\n", "<!-- c -->\nbody"},
		{"comment block", "Top\n\n<!-- c -->\nText\n", "Top\n\nText"},
		{"comment then text on its line", "Top\n\n<!-- c --> tail\nText\n", "Top\n\n tail\nText"},
		{"two comments and text on one line", "Top\n\n<!-- a --> x <!-- b -->\nText\n", "Top\n\n x \nText"},
		{"comment interrupting a paragraph", "Para line\n<!-- c -->\nmore\n", "Para line\nmore"},
		{"indented comment after a paragraph line", "Para line\n  <!-- c -->\nmore\n", "Para line\n  <!-- c -->\nmore"},
		{"comment indented 3 spaces", "Top\n\n   <!-- c -->\nText\n", "Top\n\nText"},
		{"comment indented 4 spaces", "Top\n\n    <!-- c -->\nText\n", "Top\n\n    <!-- c -->\nText"},
		{"unclosed comment", "Top\n\n<!-- open\nText\n", "Top\n\n<!-- open\nText"},
		{"comment in a list item", "- a <!-- c -->\n- b\n  <!-- d -->\n- e\n", "- a <!-- c -->\n- b\n  <!-- d -->\n- e"},
		{"comment after a list at column 0", "- a\n<!-- c -->\nText\n", "- a\nText"},
		{"comment in a fenced block", "Top\n\n```\n<!-- c -->\n```\nText\n", "Top\n\n```\n<!-- c -->\n```\nText"},
		{"comment in a blockquote", "> q\n> <!-- c -->\n\nText\n", "> q\n> <!-- c -->\n\nText"},
		{"comment after a blockquote line", "> q\n<!-- c -->\nText\n", "> q\nText"},
		{"comment after a heading", "# H\n<!-- c -->\nText\n", "# H\nText"},
		{"blank lines after a comment", "Top\n\n<!-- c -->\n\n\nText\n", "Top\n\nText"},
		{"spaces on the line after a comment", "Top\n\n<!-- c -->\n  \nText\n", "Top\n\n  \nText"},
		{"multi-line comment", "Top\n\n<!--\nx\n\ny\n-->\nText\n", "Top\n\nText"},
		{"multi-line comment closed before text", "Top\n\n<!-- a\nb --> tail\nText\n", "Top\n\n tail\nText"},
		{"short comment <!-->", "Top\n\n<!-->\nText\n", "Top\n\n<!-->\nText"},
		{"comment with trailing spaces", "Top\n\n<!-- c -->   \nText\n", "Top\n\nText"},
		{"CRLF with a comment", "Top\r\n\r\n<!-- c -->\r\nText\r\nmore\r\n", "Top\n\nText\nmore"},
		{"lone CR with a comment", "a\rb\n\n<!-- c -->\nText\n", "a\nb\n\nText"},
		{"lone CR without a comment", "a\rb\nText\n", "a\rb\nText"},
		{"multi-byte text", "# Índice\n- café — 東京 😀\n", "# Índice\n- café — 東京 😀"},
		{"invalid UTF-8", "a\xe2\x82b\xffc\xf0\x9f\x98d\n", "a\ufffdb\ufffdc\ufffdd"},
		{"Unicode spaces at either end", "\u2028\u00a0 a\n\u3000b \u2029\n", "a\n\u3000b"},
		{"NEL at the end", "a\nb\u0085\n", "a\nb\u0085"},
		{"indented comment after a quote line", "> q\n  <!-- c -->\nText\n", "> q\n  <!-- c -->\nText"},
		{"indented comments after a paragraph line", "Para\n  <!-- a -->\n  <!-- b -->\nmore\n", "Para\n  <!-- a -->\n  <!-- b -->\nmore"},
		{"indented multi-line comment after a paragraph line", "Para\n  <!-- a\nb -->\nmore\n", "Para\n  <!-- a\nb -->\nmore"},
		{"indented comment after a blank line", "Para\n\n  <!-- c -->\nmore\n", "Para\n\nmore"},
		{"comment, then an indented one", "Para\n<!-- a -->\n  <!-- b -->\nmore\n", "Para\nmore"},
		{"indented comment ending a list item", "- a\n <!-- c -->\nText\n", "- a\nText"},
		{"comment in an HTML block", "<div>\n<!-- c -->\n</div>\n\nText\n", "<div>\n<!-- c -->\n</div>\n\nText"},
		{"front matter, then a comment", "---\nname: x\n---\n<!-- c -->\nbody\n", "body"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := claudeIndexText([]byte(tt.src)); got != tt.want {
				t.Errorf("Claude loads %q, dream %q", tt.want, got)
			}
			lines, size := claudeIndexCount([]byte(tt.src))
			if lines != strings.Count(tt.want, "\n")+1 || size != utf16Len(tt.want) {
				t.Errorf("counted %d lines %d units; Claude loads %d, %d", lines, size, strings.Count(tt.want, "\n")+1, utf16Len(tt.want))
			}
		})
	}
}

// TestOf: the agents that load an index with a limit count it, and an
// unnamed agent's limit names every rule it combines and keeps one unit of
// size.
func TestOf(t *testing.T) {
	for name, want := range map[string]bool{"claude": true, "codebot": true, "codex": false, "gemini": false, "nanobot": false, "dir": false, "nope": false} {
		if l, ok := Of(name); ok != want || ok && (l.MaxLines != 200 || l.Agent == "" || l.Source == "" || l.Rule == "" || l.Unit == "" || l.count == nil || l.size == nil) {
			t.Errorf("Of(%q) = %+v, %v; want a limit: %v", name, l, ok, want)
		}
	}
	l, _ := Of("")
	for _, want := range []string{"Claude Code 2.1.197", "codebot"} {
		if !strings.Contains(l.Agent, want) || !strings.Contains(l.Rule, want) || !strings.Contains(l.Source, want) {
			t.Errorf("the unnamed limit does not name %s: %+v", want, l)
		}
	}
	if l.MaxLines != 200 || l.MaxSize != 25000 || l.Unit != host.UnitUTF16 || l.MaxFileBytes != 4<<20 {
		t.Errorf("unnamed limit %d lines %d %s, %d bytes on disk; want the smaller of each: 200, 25000 %s, 4 MiB", l.MaxLines, l.MaxSize, l.Unit, l.MaxFileBytes, host.UnitUTF16)
	}
	if got := l.Size([]byte("é😀")); got != 3 {
		t.Errorf("the unnamed limit sizes \"é😀\" as %d, want Claude's 3 UTF-16 code units", got)
	}
	if got := l.Summary(); got != "first 200 lines, then 25000 UTF-16 code units; none of a file over 4194304 bytes ("+l.Agent+")" {
		t.Errorf("summary %q", got)
	}
	if !l.Unread(make([]byte, 4<<20+1)) || l.Unread(make([]byte, 4<<20)) {
		t.Error("a file over 4 MiB is read, or one of 4 MiB is not")
	}

	// Two size limits in different units cannot be held to one number.
	claude, _ := of("claude")
	codebot, _ := of("codebot")
	bytesLimit := codebot
	bytesLimit.MaxSize = 30000
	if _, err := strictest([]Limit{claude, bytesLimit}); err == nil || !strings.Contains(err.Error(), host.UnitUTF16) {
		t.Errorf("sizes in bytes and in UTF-16 code units were combined: %v", err)
	}
	// Without any size limit, sizes are bytes.
	only, err := strictest([]Limit{codebot})
	if err != nil || only.Unit != host.UnitBytes || only.MaxSize != 0 || only.Size([]byte("é")) != 2 {
		t.Errorf("lines-only limits combined: %+v, %v", only, err)
	}
}

// TestCountersMatchHosts: every agent the registry gives an index limit
// has its count here, and nothing here counts for an agent that keeps no
// index (or that the registry does not know).
func TestCountersMatchHosts(t *testing.T) {
	known := map[string]bool{}
	for _, name := range host.Names() {
		known[name] = true
		_, limited := host.IndexLimitOf(name)
		if _, counted := counters[name]; limited != counted {
			t.Errorf("host %s: an index limit %v, a count %v", name, limited, counted)
		}
	}
	for name := range counters {
		if !known[name] {
			t.Errorf("a count for %q, which is no host", name)
		}
	}
}
