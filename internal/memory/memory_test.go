package memory

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseIndexLine(t *testing.T) {
	tests := []struct {
		raw                 string
		pointer             bool
		title, target, hook string
	}{
		{"- [Build](build.md) — how to build", true, "Build", "build.md", "how to build"},
		{"* [Auth](auth.md) – tokens", true, "Auth", "auth.md", "tokens"},
		{"- [Auth](auth.md): tokens", true, "Auth", "auth.md", "tokens"},
		{"- [Auth](auth.md) - tokens", true, "Auth", "auth.md", "tokens"},
		{"1. [Auth](./auth.md)", true, "Auth", "./auth.md", ""},
		{"  - [Spaced](<my file.md>) — x", true, "Spaced", "my file.md", "x"},
		{`- [T](t.md "title") — h`, true, "T", "t.md", "h"},
		{"- plain bullet", false, "", "", ""},
		{"# Memory", false, "", "", ""},
		{"See [x](x.md) inline", false, "", "", ""},
		{"- [empty]()", false, "", "", ""},
		{"", false, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			l := ParseIndexLine(3, tt.raw)
			if l.Line != 3 || l.Raw != tt.raw {
				t.Fatalf("line/raw = %d %q", l.Line, l.Raw)
			}
			if l.IsPointer != tt.pointer || l.Title != tt.title || l.Target != tt.target || l.Hook != tt.hook {
				t.Errorf("got pointer=%v title=%q target=%q hook=%q", l.IsPointer, l.Title, l.Target, l.Hook)
			}
		})
	}
}

func TestParseIndex(t *testing.T) {
	data := []byte("# Memory\r\n\r\n- [A](a.md) — first\r\n- note\r\n")
	idx := ParseIndex(data)
	if idx.Bytes != len(data) {
		t.Errorf("Bytes = %d", idx.Bytes)
	}
	var raws []string
	for _, l := range idx.Lines {
		raws = append(raws, l.Raw)
	}
	want := []string{"# Memory", "", "- [A](a.md) — first", "- note"}
	if !reflect.DeepEqual(raws, want) {
		t.Errorf("lines = %q", raws)
	}
	if !idx.Lines[2].IsPointer || idx.Lines[2].Line != 3 {
		t.Errorf("line 3 = %+v", idx.Lines[2])
	}
	if got := ParseIndex(nil); len(got.Lines) != 0 || got.Bytes != 0 {
		t.Errorf("empty index = %+v", got)
	}
}

func TestLocalTarget(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"a.md", "a.md", true},
		{"./dir/a.md#sec", "dir/a.md", true},
		{"my%20notes.md", "my notes.md", true},
		{"dir\\a.md", "dir/a.md", true},
		{"https://example.com/a.md", "", false},
		{"mailto:x@y", "", false},
		{"/etc/passwd", "", false},
		{"../outside.md", "", false},
		{"a/../../b.md", "", false},
		{"#anchor", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := LocalTarget(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("LocalTarget(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseTopic(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		fm       bool
		fName    string
		desc     string
		typ      string
		body     string
		bodyLine int
	}{
		{"full", "---\nname: Build\ndescription: \"How: to build\"\ntype: project\n---\n# Build\nrun make\n", true, "Build", "How: to build", "project", "# Build\nrun make\n", 6},
		{"crlf and bom", "\ufeff---\r\nname: 'It''s'\r\n---\r\nbody\r\n", true, "It's", "", "", "body\r\n", 4},
		{"folded", "---\nname: X\ndescription: >\n  one\n  two\ntype: user # who\n---\n", true, "X", "one two", "user", "", 8},
		{"no frontmatter", "# Title\ntext\n", false, "", "", "", "# Title\ntext\n", 1},
		{"unterminated", "---\nname: X\nbody\n", false, "", "", "", "---\nname: X\nbody\n", 1},
		{"junk lines kept tolerant", "---\n: nothing\n  indented\nname: Y\nnot yaml at all\n---\nb", true, "Y", "", "", "b", 7},
		{"dots terminator", "---\nname: Z\n...\nb\n", true, "Z", "", "", "b\n", 4},
		{"empty", "", false, "", "", "", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := ParseTopic("x.md", []byte(tt.in))
			if tp.Frontmatter != tt.fm || tp.Name != tt.fName || tp.Description != tt.desc || tp.Type != tt.typ {
				t.Errorf("fm=%v name=%q desc=%q type=%q", tp.Frontmatter, tp.Name, tp.Description, tp.Type)
			}
			if tp.Body != tt.body || tp.BodyLine != tt.bodyLine {
				t.Errorf("body=%q line=%d; want %q line %d", tp.Body, tp.BodyLine, tt.body, tt.bodyLine)
			}
		})
	}
}

func TestHeading(t *testing.T) {
	tp := ParseTopic("a.md", []byte("---\nname: n\n---\n```\n# not a heading\n```\n\n## Real one\n"))
	if got := tp.Heading(); got != "Real one" {
		t.Errorf("Heading = %q", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"MEMORY.md":         "- [A](a.md) — a\n",
		"a.md":              "---\nname: A\n---\nbody\n",
		"sub/b.md":          "b\n",
		"notes.txt":         "other\n",
		".consolidate-lock": "123",
		".hidden.md":        "x",
		".git/config.md":    "x",
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Index == nil || len(d.Index.Lines) != 1 {
		t.Fatalf("index = %+v", d.Index)
	}
	var paths []string
	for _, tp := range d.Topics {
		paths = append(paths, tp.Path)
	}
	if !reflect.DeepEqual(paths, []string{"a.md", "sub/b.md"}) {
		t.Errorf("topics = %v", paths)
	}
	if !reflect.DeepEqual(d.Other, []string{"notes.txt"}) {
		t.Errorf("other = %v", d.Other)
	}
	if d.Topic("a.md") == nil || d.Topic("zz.md") != nil {
		t.Error("Topic lookup wrong")
	}

	if _, err := Load(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "memory dir") {
		t.Errorf("missing dir err = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "a.md")); err == nil {
		t.Error("file as dir: want error")
	}
	empty := t.TempDir()
	d, err = Load(empty)
	if err != nil || d.Index != nil || len(d.Topics) != 0 {
		t.Errorf("empty dir = %+v, %v", d, err)
	}
}
