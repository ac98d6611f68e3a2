package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEditEscapes(t *testing.T) {
	f := newFixture(t, Limits{})
	cases := setupEscapes(t, f)
	// Reading through the symlinks must not make them editable either.
	for _, p := range []string{filepath.Join(f.display, "link.md"), filepath.Join(f.display, "outdir/victim.md")} {
		if _, err := f.call(t, "read", map[string]any{"file_path": p}); err == nil {
			t.Errorf("read followed a symlink out of the memory dir: %s", p)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.call(t, "edit", map[string]any{"file_path": tc.path, "old_string": "keep", "new_string": "pwned"})
			wantErr(t, err, tc.errText)
		})
	}
	checkOutsideUntouched(t, f)
}

func TestEdit(t *testing.T) {
	f := newFixture(t, Limits{WriteMaxBytes: 200})
	const original = "# Build\n- run make\n- run make test\n"
	writeFile(t, filepath.Join(f.staging, "build.md"), original)
	writeFile(t, filepath.Join(f.staging, "unread.md"), original)
	writeFile(t, filepath.Join(f.staging, "changed.md"), original)
	mkdir(t, filepath.Join(f.staging, "dir"))
	read := func(rel string) {
		t.Helper()
		if _, err := f.call(t, "read", map[string]any{"file_path": filepath.Join(f.display, rel)}); err != nil {
			t.Fatal(err)
		}
	}
	read("build.md")
	read("changed.md")
	// The user edits the file while the dream runs.
	writeFile(t, filepath.Join(f.staging, "changed.md"), original+"- user note\n")

	steps := []struct {
		name    string
		in      map[string]any
		want    string // content after, for successful steps
		errText []string
	}{
		{name: "not read", in: edit("unread.md", "run make", "x", false), errText: []string{"has not been read", "read tool"}},
		{name: "changed since read", in: edit("changed.md", "# Build", "# Builds", false), errText: []string{"changed on disk", "read it again"}},
		{name: "missing file", in: edit("nope.md", "a", "b", false), errText: []string{"does not exist", "write"}},
		{name: "directory", in: edit("dir", "a", "b", false), errText: []string{"directory"}},
		{name: "not unique", in: edit("build.md", "run make", "run mage", false), errText: []string{"occurs 2 times", "replace_all"}},
		{name: "not found", in: edit("build.md", "run  make", "x", false), errText: []string{"not found", "exactly"}},
		{name: "no-op", in: edit("build.md", "# Build", "# Build", false), errText: []string{"the same"}},
		{name: "empty old", in: edit("build.md", "", "x", false), errText: []string{"old_string is empty"}},
		{name: "unique edit", in: edit("build.md", "- run make test", "- run make check", false), want: "# Build\n- run make\n- run make check\n"},
		{name: "second edit after first, no re-read", in: edit("build.md", "# Build", "# Build (2024-05-01)", false), want: "# Build (2024-05-01)\n- run make\n- run make check\n"},
		{name: "replace all", in: edit(filepath.Join(f.display, "build.md"), "run make", "run mage", true), want: "# Build (2024-05-01)\n- run mage\n- run mage check\n"},
		{name: "secret added", in: edit("build.md", "- run mage\n", "- token "+fakeToken("xoxb-", 30)+"\n", false), errText: []string{"Slack token"}},
		{name: "too large", in: edit("build.md", "# Build", strings.Repeat("#", 300), false), errText: []string{"200-byte limit"}},
		{name: "empties the file", in: edit("build.md", "# Build (2024-05-01)\n- run mage\n- run mage check\n", "", false), errText: []string{"empty"}},
		{name: "missing new_string", in: map[string]any{"file_path": "build.md", "old_string": "x"}, errText: []string{"required"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			res, err := f.call(t, "edit", st.in)
			if st.errText != nil {
				wantErr(t, err, st.errText...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Touched != "build.md" {
				t.Errorf("Touched = %q", res.Touched)
			}
			if got := readFile(t, filepath.Join(f.staging, "build.md")); got != st.want {
				t.Errorf("content = %q, want %q", got, st.want)
			}
		})
	}
	if got := readFile(t, filepath.Join(f.staging, "changed.md")); got != original+"- user note\n" {
		t.Errorf("the user's concurrent change was overwritten: %q", got)
	}
	// A write also counts as having seen the file.
	if _, err := f.call(t, "write", map[string]any{"file_path": "fresh.md", "content": "one two\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.call(t, "edit", edit("fresh.md", "two", "three", false)); err != nil {
		t.Errorf("edit after write: %v", err)
	}
	// Re-reading after an outside change makes the file editable again.
	read("changed.md")
	future := time.Now().Add(time.Hour)
	_ = os.Chtimes(filepath.Join(f.staging, "changed.md"), future, future)
	if _, err := f.call(t, "edit", edit("changed.md", "- user note", "- user note (kept)", false)); err != nil {
		t.Errorf("edit after re-read: %v (an mtime change alone must not refuse it)", err)
	}
}

func edit(path, old, new string, all bool) map[string]any {
	return map[string]any{"file_path": path, "old_string": old, "new_string": new, "replace_all": all}
}

func TestApplyEdit(t *testing.T) {
	tests := []struct {
		content, old, new string
		all               bool
		want              string
		n                 int
		err               error
	}{
		{"a b a", "b", "c", false, "a c a", 1, nil},
		{"a b a", "a", "c", false, "", 0, errEditNotUnique},
		{"a b a", "a", "c", true, "c b c", 2, nil},
		{"a b a", "x", "c", false, "", 0, errEditNotFound},
		{"a b a", "", "c", false, "", 0, errEditEmptyOld},
		{"a b a", "a", "a", true, "", 0, errEditNoop},
		{"aaa", "aa", "b", true, "ba", 1, nil},
		{"line\r\nnext\r\n", "line\nnext", "x", false, "", 0, errEditNotFound},
		{"héllo", "é", "e", false, "hello", 1, nil},
	}
	for _, tt := range tests {
		got, n, err := applyEdit(tt.content, tt.old, tt.new, tt.all)
		if !errors.Is(err, tt.err) || got != tt.want || n != tt.n {
			t.Errorf("applyEdit(%q, %q, %q, %v) = %q, %d, %v; want %q, %d, %v", tt.content, tt.old, tt.new, tt.all, got, n, err, tt.want, tt.n, tt.err)
		}
	}
	_, _, err := applyEdit("a\r\nb", "a\nb", "x", false)
	if err == nil || !strings.Contains(err.Error(), "CRLF") {
		t.Errorf("CRLF hint missing: %v", err)
	}
}

// FuzzEdit applies arbitrary edits: applyEdit never panics, and when it
// succeeds the result is exactly the content with old replaced.
func FuzzEdit(f *testing.F) {
	f.Add("# Title\n- a\n- b\n", "- a", "- c", false)
	f.Add("x x x", "x", "y", true)
	f.Add("x x x", "x", "y", false)
	f.Add("", "", "", false)
	f.Add("\xff\xfe", "\xfe", "é", false)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		got, n, err := applyEdit(content, old, new, all)
		if err != nil {
			if got != "" || n != 0 {
				t.Fatalf("error %v with result %q, %d", err, got, n)
			}
			return
		}
		if old == "" || old == new || n < 1 {
			t.Fatalf("accepted old=%q new=%q n=%d", old, new, n)
		}
		if !all && n != 1 {
			t.Fatalf("replaced %d without replace_all", n)
		}
		// Splitting on old and joining with new is the definition of the
		// replacement; for a single replacement old must have been unique.
		if want := strings.Join(strings.Split(content, old), new); got != want {
			t.Fatalf("result %q, want %q", got, want)
		}
		if n != strings.Count(content, old) {
			t.Fatalf("n = %d, count = %d", n, strings.Count(content, old))
		}
	})
}

// With the repository and the memory dir the same directory (a folder of
// notes dreamt in place), read must show the staged copy and record it, so
// that edit works and sees the dream's own writes.
func TestEditWhenRepoIsMemoryDir(t *testing.T) {
	base := t.TempDir()
	notes, staging := filepath.Join(base, "notes"), filepath.Join(base, "staging")
	mkdir(t, notes)
	mkdir(t, staging)
	writeFile(t, filepath.Join(notes, "a.md"), "live\n")
	writeFile(t, filepath.Join(staging, "a.md"), "staged\n")
	s, err := NewSet(Env{MemoryDir: staging, MemoryDisplayDir: notes, RepoDir: notes})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	byName := map[string]Tool{}
	for _, tl := range s.Tools() {
		byName[tl.Name()] = tl
	}
	res, err := byName["read"].Execute(context.Background(), json.RawMessage(`{"file_path":"a.md"}`))
	if err != nil || !strings.Contains(res.Content, "staged") {
		t.Fatalf("read = %q, %v; want the staged content", res.Content, err)
	}
	if _, err := byName["edit"].Execute(context.Background(), json.RawMessage(`{"file_path":"a.md","old_string":"staged","new_string":"edited"}`)); err != nil {
		t.Fatalf("edit after read: %v", err)
	}
	if got := readFile(t, filepath.Join(notes, "a.md")); got != "live\n" {
		t.Errorf("live file changed to %q", got)
	}
}
