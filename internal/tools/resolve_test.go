package tools

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRelativeNamesMemoryFirst: "read MEMORY.md" reads the memory's
// index (the staged copy), and the edit of MEMORY.md that follows is
// allowed; a repository file is still read by its repository-relative path
// when the memory has no file of that name, and by its absolute path when
// it does.
func TestReadRelativeNamesMemoryFirst(t *testing.T) {
	f := newFixture(t, Limits{})
	writeFile(t, filepath.Join(f.staging, "MEMORY.md"), "# Memory\n\n- [Ops](ops.md) — how production is run\n")
	writeFile(t, filepath.Join(f.repo, "MEMORY.md"), "# the repository's own MEMORY.md\n")
	writeFile(t, filepath.Join(f.repo, "internal", "server", "server.go"), "package server\n\nconst port = 9091\n")

	res, err := f.call(t, "read", map[string]any{"file_path": "MEMORY.md"})
	if err != nil || !strings.Contains(res.Content, "- [Ops](ops.md)") {
		t.Fatalf("read MEMORY.md: %v\n%s", err, res.Content)
	}
	res, err = f.call(t, "edit", map[string]any{"file_path": "MEMORY.md", "old_string": "how production is run", "new_string": "how production is run and paged"})
	if err != nil || res.Touched != "MEMORY.md" {
		t.Fatalf("edit MEMORY.md after reading it: %v %+v", err, res)
	}
	if got := readFile(t, filepath.Join(f.staging, "MEMORY.md")); !strings.Contains(got, "and paged") {
		t.Fatalf("the edit did not land in the memory: %q", got)
	}

	res, err = f.call(t, "read", map[string]any{"file_path": "internal/server/server.go"})
	if err != nil || !strings.Contains(res.Content, "const port = 9091") {
		t.Fatalf("a repository file by its relative path: %v\n%s", err, res.Content)
	}
	res, err = f.call(t, "read", map[string]any{"file_path": filepath.Join(f.repo, "MEMORY.md")})
	if err != nil || !strings.Contains(res.Content, "the repository's own") {
		t.Fatalf("a repository file sharing a memory file's name, by its absolute path: %v\n%s", err, res.Content)
	}
}

// TestMissingPathNamesTheLikelyFile: a path that names nothing gets an
// error that names the file the model probably meant.
func TestMissingPathNamesTheLikelyFile(t *testing.T) {
	f := newFixture(t, Limits{})
	writeFile(t, filepath.Join(f.staging, "MEMORY.md"), "# Memory\n")
	writeFile(t, filepath.Join(f.staging, "services", "auth.md"), "# Auth\n")
	writeFile(t, filepath.Join(f.repo, "cmd", "Main.go"), "package main\n")
	tests := []struct {
		tool  string
		in    map[string]any
		wants []string
	}{
		{"read", map[string]any{"file_path": "memory.md"}, []string{"did you mean " + filepath.Join(f.display, "MEMORY.md")}},
		{"read", map[string]any{"file_path": "auth.md"}, []string{"did you mean " + filepath.Join(f.display, "services", "auth.md")}},
		{"read", map[string]any{"file_path": "cmd/main.go"}, []string{"did you mean " + filepath.Join(f.repo, "cmd", "Main.go")}},
		{"read", map[string]any{"file_path": "nothing.md"}, []string{"no file nothing.md", "ls or glob"}},
		{"edit", map[string]any{"file_path": "topics/auth.md", "old_string": "a", "new_string": "b"}, []string{"did you mean " + filepath.Join(f.display, "services", "auth.md")}},
		{"edit", map[string]any{"file_path": "cmd/Main.go", "old_string": "a", "new_string": "b"}, []string{"is a repository file, which is read-only"}},
	}
	for _, tt := range tests {
		_, err := f.call(t, tt.tool, tt.in)
		wantErr(t, err, tt.wants...)
	}
}

// TestShownIsEvidence: what read, grep, glob and ls show from the
// repository and the transcripts is recorded (without the line numbers the
// tools put in front), what they show of the memory is not, and a citation
// is accepted only when its quote is in what the model was shown.
func TestShownIsEvidence(t *testing.T) {
	f := newFixture(t, Limits{})
	writeFile(t, filepath.Join(f.staging, "auth.md"), "# Auth\n\n- Port: 8081\n")
	session := filepath.Join(f.sessions, "s1.jsonl")
	writeFile(t, session, `{"role":"user","content":"we moved the auth service to port 9091"}`+"\n")
	writeFile(t, filepath.Join(f.repo, "server.go"), "package server\n\nconst port = 9091\n")

	for _, c := range []struct {
		tool string
		in   map[string]any
	}{
		{"read", map[string]any{"file_path": "auth.md"}},
		{"grep", map[string]any{"pattern": "port", "path": f.display}},
		{"read", map[string]any{"file_path": session}},
		{"grep", map[string]any{"pattern": "9091", "path": f.repo}},
		{"glob", map[string]any{"pattern": "*.go"}},
		{"ls", map[string]any{"path": f.sessions}},
	} {
		if _, err := f.call(t, c.tool, c.in); err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.in, err)
		}
	}
	var got []string
	for _, s := range f.set.Shown() {
		got = append(got, s.Tool+" "+f.normalize(s.Source)+": "+f.normalize(s.Text))
	}
	want := []string{
		"read $BASE/sessions/s1.jsonl: " + `{"role":"user","content":"we moved the auth service to port 9091"}` + "\n",
		"grep $BASE/repo: $BASE/repo/server.go:const port = 9091\n",
		"glob $BASE/repo: $BASE/repo/server.go\n",
		"ls $BASE/sessions: $BASE/sessions/s1.jsonl\n",
	}
	if strings.Join(got, "") != strings.Join(want, "") {
		t.Errorf("shown:\n%s\nwant:\n%s", strings.Join(got, ""), strings.Join(want, ""))
	}

	edit := func(cite map[string]any) error {
		_, err := f.call(t, "edit", map[string]any{"file_path": "auth.md", "old_string": "8081", "new_string": "9091", "evidence": cite})
		return err
	}
	wantErr(t, edit(map[string]any{"file_path": session, "quote": "moved the auth service to port 7777"}), "evidence.quote is not in what read or grep showed you")
	wantErr(t, edit(map[string]any{"file_path": "auth.md", "quote": "Port: 8081"}), "is a memory file")
	if err := edit(map[string]any{"file_path": filepath.Join(f.repo, "server.go"), "quote": "const port = 9091"}); err != nil {
		t.Fatalf("a quote from a grep line: %v", err)
	}
	if cs := f.set.Citations(); len(cs) != 1 || cs[0].File != "auth.md" || cs[0].Quote != "const port = 9091" {
		t.Errorf("citations %+v", cs)
	}
}
