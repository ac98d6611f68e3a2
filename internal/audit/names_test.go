package audit

import (
	"fmt"
	"strings"
	"testing"
)

// TestUndoAnyName is issue 9's class 6 for undo: names git can store but a
// line protocol cannot — a newline, a tab, a leading dash, quotes, a
// backslash, non-UTF-8 bytes, Chinese — are recorded, shown and undone like
// any other. Before, undo refused outright ("cannot handle a file name with
// a line break"), and a dream that wrote such a name could never be undone.
func TestUndoAnyName(t *testing.T) {
	names := []string{
		"note\nwith newline.md",
		"tab\there.md",
		"-dash.md",
		`quo"te\back.md`,
		"bad-\xff-utf8.md",
		"中文 笔记.md",
		"dir\nnl/inner.md",
	}
	for _, name := range names {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			h, mem := setup(t)
			ctx := testCtx(t)
			writeTree(t, mem, map[string]string{name: "# Note\n\n- first fact\n- second fact\n", "MEMORY.md": "# Memory\n"})
			before := treeHash(t, mem)
			if _, err := h.RecordHandEdits(ctx); err != nil {
				t.Fatal(err)
			}
			writeTree(t, mem, map[string]string{name: "# Note\n\n- first fact, confirmed\n- second fact\n", "added\nname.md": "new\n"})
			m := meta("d1")
			m.Paths = []string{name, "added\nname.md"}
			if _, err := h.RecordDream(ctx, m); err != nil {
				t.Fatal(err)
			}
			e, err := h.Show(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Files) != 2 || e.Files[1].Path != name && e.Files[0].Path != name {
				t.Fatalf("recorded files = %+v", e.Files)
			}
			if !strings.Contains(e.Diff, "confirmed") {
				t.Errorf("diff lacks the change:\n%s", e.Diff)
			}
			if _, err := h.Undo(ctx, "d1", false); err != nil {
				t.Fatal(err)
			}
			if got := treeHash(t, mem); got != before {
				t.Fatalf("tree after undo\n%s\nwant\n%s", got, before)
			}
		})
	}
}

// TestLogMatchesShow: Log reads files and diffs of every entry in one
// git call; the entries match what Show returns one by one.
func TestLogMatchesShow(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		writeTree(t, mem, map[string]string{fmt.Sprintf("t%d.md", i): fmt.Sprintf("fact %d\n", i), "MEMORY.md": fmt.Sprintf("# Memory %d\n", i)})
		m := meta(fmt.Sprintf("d%d", i))
		if i%2 == 0 {
			m.Paths = []string{fmt.Sprintf("t%d.md", i), "MEMORY.md"}
		}
		if _, err := h.RecordDream(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	log, err := h.Log(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 6 {
		t.Fatalf("log has %d entries", len(log))
	}
	for _, e := range log {
		s, err := h.Show(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(s) != fmt.Sprint(e) {
			t.Errorf("log entry %s differs from show:\n%+v\n%+v", e.ID, e, s)
		}
		if e.Kind == KindDream && len(e.Files) != 2 {
			t.Errorf("%s files = %+v", e.ID, e.Files)
		}
	}
}
