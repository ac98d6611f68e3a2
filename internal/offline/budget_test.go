package offline

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/indexcount"
)

// budgetIndex is an index of n pointers under head, with a file for each.
func budgetIndex(head string, n int) map[string]string {
	files := map[string]string{}
	var b strings.Builder
	b.WriteString(head)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "- [Service %03d](topic_%03d.md) — port and owner of service %03d\n", i, i, i)
		files[fmt.Sprintf("topic_%03d.md", i)] = fmt.Sprintf("---\nname: Service %03d\ndescription: port and owner\n---\n- Port 8%03d.\n", i, i)
	}
	files["MEMORY.md"] = b.String()
	return files
}

// TestIndexBudgetAsTheAgentCounts: the index is kept within the limit of
// the agent that loads it, counted as that agent counts (blank lines and,
// for codebot, front matter count; Claude Code strips front matter and
// comments first), changing as little as that needs: blank lines no block
// needs go before any of the user's words move, and an index of pointers
// alone that cannot be brought within is left as it is and said to be
// over budget. (Issue 28: the engine counted non-blank lines only, so a
// 201-line index stayed 201 lines, and its rules were the first to move.)
func TestIndexBudgetAsTheAgentCounts(t *testing.T) {
	rules := "# Memory Index\n\n## Rules (read first)\n\n- NEVER run `terraform apply` without asking the user first.\n- Answer in English even when the user writes in Portuguese.\n- The user is on call on Tuesdays; keep answers short then.\n\n## Topics\n\n"
	frontmatter := "---\nname: Memory index\ndescription: Pointers to every memory file\ntype: reference\n---\n\n# Memory Index\n\nKeep each entry to one line. Detail belongs in the topic file.\n\n"
	for _, tt := range []struct {
		name  string
		host  string
		files map[string]string
		// lines is the index's length as written afterwards; kept are
		// texts that must stay in it.
		lines      int
		kept       []string
		changed    bool
		overBudget bool
	}{
		{"201 lines, rules on top: a blank line goes, the rules stay", "", budgetIndex(rules, 191), 200, []string{"NEVER run `terraform apply`", "on call on Tuesdays", "## Topics"}, true, false},
		{"the same as Claude Code counts it", "claude", budgetIndex(rules, 191), 200, []string{"NEVER run `terraform apply`", "## Rules"}, true, false},
		{"front matter: 201 lines written, 195 as Claude Code loads them", "claude", budgetIndex(frontmatter, 191), 201, []string{"---\nname: Memory index", "Keep each entry"}, false, false},
		{"front matter, no agent named: codebot counts it too", "", budgetIndex(frontmatter, 191), 200, []string{"---\nname: Memory index", "Keep each entry"}, true, false},
		{"232 pointers and nothing else", "", budgetIndex("# Memory\n\n", 230), 232, nil, false, true},
		{"200 lines and a trailing blank line cost nothing", "", budgetIndex("\ufeff# Memory Index\r\n\r\n- Answer in English.\r\n\r\n", 196), 201, []string{"# Memory Index", "- Answer in English."}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.name, "trailing blank") {
				tt.files["MEMORY.md"] = strings.ReplaceAll(tt.files["MEMORY.md"], "\n", "\r\n") + "\r\n"
				tt.files["MEMORY.md"] = strings.ReplaceAll(tt.files["MEMORY.md"], "\r\r\n", "\r\n")
			}
			before := tt.files["MEMORY.md"]
			rep, out := runOn(t, tt.files, Options{Layout: LayoutFor(tt.host)})
			index := out["MEMORY.md"]
			if n := strings.Count(index, "\n"); n != tt.lines {
				t.Errorf("MEMORY.md is %d lines, want %d", n, tt.lines)
			}
			for _, k := range tt.kept {
				if !strings.Contains(index, k) {
					t.Errorf("MEMORY.md lost %q", k)
				}
			}
			if (index != before) != tt.changed {
				t.Errorf("changed %v, want %v: fixes %+v", index != before, tt.changed, rep.Fixes)
			}
			if _, ok := out[OverflowFile]; ok {
				t.Errorf("%s was created: blank lines were enough, or nothing could be done", OverflowFile)
			}
			lim, _ := indexcount.Of(tt.host)
			st := rep.Index
			if st == nil || st.OverBudget != tt.overBudget || st.Limit.Agent != lim.Agent || st.File != "MEMORY.md" {
				t.Fatalf("index state %+v, want over budget %v by %s's rule", st, tt.overBudget, lim.Agent)
			}
			if l, n := lim.Count([]byte(index)); l != st.Lines || n != st.Size || lim.Fits(l, n) == tt.overBudget {
				t.Errorf("state %d lines %d %s, the index counts %d %d", st.Lines, st.Size, lim.Unit, l, n)
			}
			if tt.overBudget && (!strings.Contains(st.Message, "232 lines") || !strings.Contains(st.Message, "merge related topics")) {
				t.Errorf("message %q does not say how far over and what to do", st.Message)
			}
			// A second run finds nothing more to do.
			again, out2 := runOn(t, out, Options{Layout: LayoutFor(tt.host)})
			if out2["MEMORY.md"] != index || len(again.Fixes) != 0 {
				t.Errorf("a second run changed the index: %+v", again.Fixes)
			}
		})
	}
}

// TestBudgetMovesAfterBlankLines: when blank lines are not enough, the
// user's text moves bottom-up, each block with the blank line after it, and
// nothing moves at all when even that cannot bring the index within.
func TestBudgetMovesAfterBlankLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Memory\n\n")
	for i := 0; i < 190; i++ {
		fmt.Fprintf(&b, "- [T%d](t%d.md) — hook %d\n", i, i, i)
		if i%50 == 10 {
			fmt.Fprintf(&b, "\nA note of the user's own about %d.\n\n", i)
		}
	}
	files := map[string]string{"MEMORY.md": b.String()}
	for i := 0; i < 190; i++ {
		files[fmt.Sprintf("t%d.md", i)] = "- x\n"
	}
	// 2 + 190 + 4 notes × 3 = 204 lines: the blank line after the heading,
	// then the two lowest notes with a blank line each, and the pointer to
	// the overflow file.
	rep, out := runOn(t, files, Options{Layout: LayoutFor("")})
	if n := strings.Count(out["MEMORY.md"], "\n"); n > 200 || rep.Index.OverBudget {
		t.Fatalf("MEMORY.md is %d lines: %+v", n, rep.Index)
	}
	of := out[OverflowFile]
	for _, moved := range []string{"about 160.", "about 110."} {
		if !strings.Contains(of, moved) || strings.Contains(out["MEMORY.md"], moved) {
			t.Errorf("%q was not moved to the overflow file", moved)
		}
	}
	for _, kept := range []string{"about 10.", "about 60."} {
		if !strings.Contains(out["MEMORY.md"], kept) {
			t.Errorf("%q was moved though the index fit without it", kept)
		}
	}
	if strings.Contains(out["MEMORY.md"], "\n\n\n") {
		t.Error("a moved note left two blank lines behind")
	}
}

// TestBudgetInClaudesUnits: Claude Code measures its index in UTF-16 code
// units, not bytes, and counts blank lines; the overflow pointer costs
// what it adds where it goes. A multi-byte index over 25,000 bytes but
// under 25,000 units loads whole and is left alone; a 201-line index with
// blank lines inside a list, whose pointer goes after a blank line at the
// end, is brought to 200; an index too large on disk to be read at all is
// said to be, not shortened. (Issue 29: bytes moved lines out of an index
// Claude loaded whole, and a 201-line index stayed 201 lines.)
func TestBudgetInClaudesUnits(t *testing.T) {
	var accents, facts []string
	for i := 1; i <= 180; i++ {
		accents = append(accents, fmt.Sprintf("- fait %d : %s", i, strings.Repeat("é", 80)))
	}
	facts = append(facts, "# Memory")
	for i := 1; i <= 200; i++ {
		if i%10 == 5 {
			facts = append(facts, "")
			continue
		}
		facts = append(facts, fmt.Sprintf("- fact %d: the build of service %d runs make ship-%d", i, i, i))
	}
	huge := "# Memory\n\n- [Build](build.md) — how it builds\n\n<!--\n" + strings.Repeat(strings.Repeat("x", 1023)+"\n", 4097) + "-->\n"
	for _, agent := range []string{"claude", ""} {
		t.Run("multi-byte, "+agent, func(t *testing.T) {
			src := strings.Join(accents, "\n") + "\n"
			rep, out := runOn(t, map[string]string{"MEMORY.md": src}, Options{Layout: LayoutFor(agent)})
			if out["MEMORY.md"] != src || len(rep.Fixes) != 0 || rep.Index.OverBudget {
				t.Errorf("an index of %d bytes, %d units was changed: %+v %+v", len(src), rep.Index.Size, rep.Fixes, rep.Index)
			}
			if rep.Index.Size != utf8.RuneCountInString(strings.TrimSpace(src)) || len(src) <= 25000 || rep.Index.Limit.Unit != host.UnitUTF16 {
				t.Errorf("size %d %s", rep.Index.Size, rep.Index.Limit.Unit)
			}
		})
	}
	t.Run("201 lines with blank lines", func(t *testing.T) {
		src := strings.Join(facts, "\n") + "\n"
		rep, out := runOn(t, map[string]string{"MEMORY.md": src}, Options{Layout: LayoutFor("claude")})
		lim, _ := indexcount.Of("claude")
		if l, n := lim.Count([]byte(out["MEMORY.md"])); l != 200 || !lim.Fits(l, n) || rep.Index.OverBudget {
			t.Fatalf("MEMORY.md is %d lines as Claude counts it, want 200: %v\n%s", l, rep.Notes, out["MEMORY.md"])
		}
		for _, moved := range []string{"fact 198:", "fact 199:", "fact 200:"} {
			if !strings.Contains(out[OverflowFile], moved) || strings.Contains(out["MEMORY.md"], moved) {
				t.Errorf("%q was not moved to %s", moved, OverflowFile)
			}
		}
		if strings.Contains(out[OverflowFile], "fact 197:") {
			t.Error("one line more than needed was moved")
		}
	})
	t.Run("over 4 MiB on disk", func(t *testing.T) {
		rep, out := runOn(t, map[string]string{"MEMORY.md": huge, "build.md": "- make\n"}, Options{Layout: LayoutFor("claude")})
		if out["MEMORY.md"] != huge || !rep.Index.OverBudget || !strings.Contains(rep.Index.Message, "reads at all: it loads none of it") {
			t.Errorf("index state %+v", rep.Index)
		}
		if l, _ := indexcount.Of("claude"); !l.Fits(l.Count([]byte(huge))) {
			t.Error("the comment was counted: the test proves nothing")
		}
	})
}
