package conformance

import (
	"path/filepath"
	"strings"
	"testing"
)

// indexTextCases are small indexes that exercise each step of Claude
// Code 2.1.197's loading of MEMORY.md: front matter, HTML comments (only
// a top-level comment block goes), carriage returns, trimming, sizes in
// UTF-16 code units, and the 4 MiB a file may have on disk. The same files
// are in internal/indexcount's TestClaudeIndexText, with what Claude sent.
var indexTextCases = []struct {
	name, src string
	// unread: Claude loads none of it.
	unread bool
}{
	{"front matter", "---\nname: x\n---\n# H\nbody\n", false},
	{"front matter closed mid-line", "---\nname: x --- y\nrest\n", false},
	{"front matter closed inside a later value", "---\ntitle: a---b\nmore\n---\nbody\n", false},
	{"empty front matter", "---\n---\nbody\n", false},
	{"front matter with blank lines after", "--- \nname: x\n---   \n\n\nbody\n", false},
	{"four dashes are no front matter", "----\nx\n---\nbody\n", false},
	{"unclosed front matter", "---\nname: x\nbody\n", false},
	{"front matter that is not YAML", "---\n: : [\n---\nbody\n", false},
	{"front matter with CRLF", "---\r\nname: x\r\n---\r\nbody\r\nmore\r\n", false},
	{"BOM before front matter", "\ufeff---\nname: x\n---\nbody\n", false},
	{"BOM before a comment", "\ufeff<!-- c -->\nbody\n", false},
	{"comment block", "Top\n\n<!-- c -->\nText\n", false},
	{"comment then text on its line", "Top\n\n<!-- c --> tail\nText\n", false},
	{"two comments and text on one line", "Top\n\n<!-- a --> x <!-- b -->\nText\n", false},
	{"comment interrupting a paragraph", "Para line\n<!-- c -->\nmore\n", false},
	{"indented comment after a paragraph line", "Para line\n  <!-- c -->\nmore\n", false},
	{"comment indented 3 spaces", "Top\n\n   <!-- c -->\nText\n", false},
	{"comment indented 4 spaces", "Top\n\n    <!-- c -->\nText\n", false},
	{"unclosed comment", "Top\n\n<!-- open\nText\n", false},
	{"comment in a list item", "- a <!-- c -->\n- b\n  <!-- d -->\n- e\n", false},
	{"comment after a list at column 0", "- a\n<!-- c -->\nText\n", false},
	{"comment in a fenced block", "Top\n\n```\n<!-- c -->\n```\nText\n", false},
	{"comment in a blockquote", "> q\n> <!-- c -->\n\nText\n", false},
	{"comment after a blockquote line", "> q\n<!-- c -->\nText\n", false},
	{"comment after a heading", "# H\n<!-- c -->\nText\n", false},
	{"blank lines after a comment", "Top\n\n<!-- c -->\n\n\nText\n", false},
	{"spaces on the line after a comment", "Top\n\n<!-- c -->\n  \nText\n", false},
	{"multi-line comment", "Top\n\n<!--\nx\n\ny\n-->\nText\n", false},
	{"multi-line comment closed before text", "Top\n\n<!-- a\nb --> tail\nText\n", false},
	{"short comment <!-->", "Top\n\n<!-->\nText\n", false},
	{"comment with trailing spaces", "Top\n\n<!-- c -->   \nText\n", false},
	{"CRLF with a comment", "Top\r\n\r\n<!-- c -->\r\nText\r\nmore\r\n", false},
	{"lone CR with a comment", "a\rb\n\n<!-- c -->\nText\n", false},
	{"lone CR without a comment", "a\rb\nText\n", false},
	{"multi-byte text", "# Índice\n- café — 東京 😀\n", false},
	{"invalid UTF-8", "a\xe2\x82b\xffc\xf0\x9f\x98d\n", false},
	{"Unicode spaces at either end", "\u2028\u00a0 a\n\u3000b \u2029\n", false},
	{"NEL at the end", "a\nb\u0085\n", false},
	{"indented comment after a quote line", "> q\n  <!-- c -->\nText\n", false},
	{"indented comments after a paragraph line", "Para\n  <!-- a -->\n  <!-- b -->\nmore\n", false},
	{"indented multi-line comment after a paragraph line", "Para\n  <!-- a\nb -->\nmore\n", false},
	{"indented comment after a blank line", "Para\n\n  <!-- c -->\nmore\n", false},
	{"comment, then an indented one", "Para\n<!-- a -->\n  <!-- b -->\nmore\n", false},
	{"indented comment ending a list item", "- a\n <!-- c -->\nText\n", false},
	{"comment in an HTML block", "<div>\n<!-- c -->\n</div>\n\nText\n", false},
	{"front matter, then a comment", "---\nname: x\n---\n<!-- c -->\nbody\n", false},
	{"over 4 MiB on disk", "# Memory\n\n- a fact\n\n<!--\n" + strings.Repeat(strings.Repeat("x", 1023)+"\n", 4097) + "-->\n", true},
}

// TestClaudeIndexCount: for each small index, what the real Claude sends of
// it, counted in lines and UTF-16 code units, is what `dream status`
// counts. (Issue 29: dream counted bytes, and comments and front matter by
// rules of its own.)
func TestClaudeIndexCount(t *testing.T) {
	a := requireAgent(t, "claude")
	check(t, a, "index counted as Claude loads it: front matter, comments, trim, UTF-16")
	s, _ := claudeSandbox(t, true)
	st := firstClaudeSession(t, s, a)
	index := filepath.Join(st.MemoryDir, "MEMORY.md")
	for _, tc := range indexTextCases {
		t.Run(tc.name, func(t *testing.T) {
			s.WriteFile(index, tc.src)
			claudePrint(s, a, "hello")
			turn := lastClaudeTurn(t, s)
			if len(tc.src) < 1000 {
				t.Logf("Claude loaded %q as %q", tc.src, turn.Index)
			}
			var status struct {
				Index struct {
					Lines      int    `json:"lines"`
					Size       int    `json:"size"`
					OverBudget bool   `json:"over_budget"`
					Message    string `json:"message"`
				} `json:"index"`
			}
			s.DreamJSON(&status, "status", "--host", "claude")
			if tc.unread {
				if turn.Loaded || !status.Index.OverBudget || !strings.Contains(status.Index.Message, "loads none of it") {
					t.Errorf("Claude loaded %v (%d bytes); dream says over budget %v: %q", turn.Loaded, len(turn.Index), status.Index.OverBudget, status.Index.Message)
				}
				return
			}
			if !turn.Loaded {
				t.Fatalf("Claude loaded no index")
			}
			lines, size := strings.Count(turn.Index, "\n")+1, utf16Len(turn.Index)
			if status.Index.Lines != lines || status.Index.Size != size || status.Index.OverBudget {
				t.Errorf("Claude loads %d lines, %d UTF-16 units (%q); dream counts %d lines, %d (over budget %v)", lines, size, turn.Index, status.Index.Lines, status.Index.Size, status.Index.OverBudget)
			}
		})
	}
}
