package memory

import (
	"strings"
	"testing"
)

// FuzzParseIndex checks that any input parses without panic and that the
// lines round-trip: nothing of the index is lost by parsing.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte("# Memory\n- [A](a.md) — hook\n"))
	f.Add([]byte("- [](\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx := ParseIndex(data)
		if idx.Bytes != len(data) {
			t.Fatalf("Bytes %d != %d", idx.Bytes, len(data))
		}
		var raws []string
		for i, l := range idx.Lines {
			if l.Line != i+1 {
				t.Fatalf("line number %d at %d", l.Line, i)
			}
			if l.IsPointer && l.Target == "" {
				t.Fatalf("pointer without target: %q", l.Raw)
			}
			raws = append(raws, l.Raw)
		}
		want := 0
		if len(data) > 0 {
			want = strings.Count(strings.TrimSuffix(string(data), "\n"), "\n") + 1
		}
		if len(raws) != want {
			t.Fatalf("%d lines, want %d", len(raws), want)
		}
		for _, r := range raws {
			if strings.Contains(r, "\n") {
				t.Fatalf("line keeps its ending: %q", r)
			}
			if !strings.Contains(string(data), r) {
				t.Fatalf("line %q not in input", r)
			}
		}
	})
}

// FuzzParseTopic checks that any input parses without panic and that the
// body is always the tail of the raw bytes.
func FuzzParseTopic(f *testing.F) {
	f.Add([]byte("---\nname: A\ndescription: d\ntype: user\n---\nbody\n"))
	f.Add([]byte("---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp := ParseTopic("f.md", data)
		if !strings.HasSuffix(string(data), tp.Body) {
			t.Fatalf("body %q is not a suffix of raw", tp.Body)
		}
		if tp.BodyLine < 1 {
			t.Fatalf("BodyLine %d", tp.BodyLine)
		}
		if !tp.Frontmatter && tp.Body != string(data) {
			t.Fatal("no frontmatter but body differs from raw")
		}
		if tp.Frontmatter && tp.Fields == nil {
			t.Fatal("frontmatter without fields map")
		}
	})
}
