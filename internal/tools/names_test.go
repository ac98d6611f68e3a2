package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteRefusesBadNames is issue 9 class 6 at the tool: names dream could
// not carry through its index, journal and undo are refused with a message
// the model can act on, and nothing is created; a reserved temporary name is
// refused rather than reported "Created" and then dropped by the commit.
func TestWriteRefusesBadNames(t *testing.T) {
	f := newFixture(t, Limits{})
	mkdir(t, filepath.Join(f.staging, "archive.md")) // a directory named like a memory file
	tests := []struct {
		name string
		path string
		want string
	}{
		{"newline", "notes\nMEMORY.md", "control character"},
		{"carriage return", "notes\r.md", "control character"},
		{"tab", "a\tb.md", "control character"},
		{"escape sequence", "\x1b[31mred.md", "control character"},
		{"C1 control", "a\u0085b.md", "control character"},
		{"line separator", "a\u2028b.md", "control character"},
		{"invalid utf-8 (JSON turns it into U+FFFD)", "bad\xff\xfe.md", "UTF-8"},
		{"journal temp", ".dream-tmp-notes.md", "temporary files"},
		{"journal temp nested, other case", "sub/.DREAM-TMP-x", "temporary files"},
		{"leading space", " notes.md", "white space"},
		{"directory named like a memory file", "topic.md/child.md", "directory named like a memory file"},
		{"existing directory", "archive.md", "is a directory"},
		{"aws key id as name", "AKIA" + "IOSFODNN7EXAMPL2.md", "file name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.call(t, "write", map[string]any{"file_path": tt.path, "content": "# Notes\n\nkept\n"})
			wantErr(t, err, tt.want)
			if strings.Contains(res.Content, "Created") {
				t.Errorf("refused write reported %q", res.Content)
			}
			_, err = f.call(t, "edit", map[string]any{"file_path": tt.path, "old_string": "kept", "new_string": "changed"})
			if err == nil {
				t.Errorf("edit of %q accepted", tt.path)
			}
		})
	}
	// Nothing new appeared in the memory dir but the directory made above.
	entries, err := os.ReadDir(f.staging)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "archive.md" {
			t.Errorf("refused write left %q behind", e.Name())
		}
	}
	// Plain names in any script are fine.
	for _, ok := range []string{"项目笔记.md", "notes/2026-11-29 retro.md", "café.md"} {
		if _, err := f.call(t, "write", map[string]any{"file_path": ok, "content": "# ok\n"}); err != nil {
			t.Errorf("write %q: %v", ok, err)
		}
	}
}

// TestListingsShowOddNamesSanely: a file whose name holds a newline or
// invalid UTF-8 (which git, a user or another agent can create) is shown as
// one quoted entry by ls, glob and grep, never as two lines the model would
// take for two files.
func TestListingsShowOddNamesSanely(t *testing.T) {
	f := newFixture(t, Limits{})
	odd := "evil\nMEMORY.md"
	bad := "latin1-\xe9.md"
	writeFile(t, filepath.Join(f.repo, odd), "needle\n")
	writeFile(t, filepath.Join(f.repo, bad), "needle\n")
	res, err := f.call(t, "ls", map[string]any{"path": f.repo})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, `"evil\nMEMORY.md" (7 bytes)`) || !strings.Contains(res.Content, `"latin1-\xe9.md" (7 bytes)`) {
		t.Errorf("ls:\n%s", res.Content)
	}
	if n := strings.Count(res.Content, "\n"); n != 3 {
		t.Errorf("ls printed %d lines for 2 entries:\n%s", n, res.Content)
	}
	for _, call := range []struct {
		tool  string
		input map[string]any
	}{
		{"glob", map[string]any{"pattern": "*.md"}},
		{"grep", map[string]any{"pattern": "needle", "output_mode": "files_with_matches"}},
		{"grep", map[string]any{"pattern": "needle"}},
	} {
		res, err := f.call(t, call.tool, call.input)
		if err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(res.Content), "\n") {
			if strings.HasPrefix(line, "MEMORY.md") || !strings.HasPrefix(line, "[") && !strings.HasPrefix(line, `"`) {
				t.Errorf("%s: entry %q is not one quoted name\n%s", call.tool, line, res.Content)
			}
		}
	}
}

// TestNoWriteAfterClose: a call the agent abandoned may finish after the
// dream's tool set was closed (the runner closes it before the commit); it
// must then fail rather than change the memory behind the commit's back.
func TestNoWriteAfterClose(t *testing.T) {
	f := newFixture(t, Limits{})
	if err := f.set.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := f.call(t, "write", map[string]any{"file_path": "late.md", "content": "# Late\n"})
	if err == nil {
		t.Fatal("write after Close succeeded")
	}
	if _, err := os.Stat(filepath.Join(f.staging, "late.md")); !os.IsNotExist(err) {
		t.Errorf("late.md exists after a write on a closed set: %v", err)
	}
}
