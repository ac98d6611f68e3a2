package memory

import (
	"os"
	"path/filepath"
	"testing"
	"unicode"
)

// TestIsCJKFastPath: the early return below U+1100 agrees with the Unicode
// tables on every code point.
func TestIsCJKFastPath(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
		if IsCJK(r) != want {
			t.Fatalf("IsCJK(%U) = %v", r, !want)
		}
	}
}

// TestListAndReader: List names what Load would read, without reading it,
// and the Reader stays inside the memory dir.
func TestListAndReader(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"MEMORY.md": "# M\n", "b.md": "b\n", "sub/a.md": "a\n", "notes.txt": "x", ".hidden.md": "h", ".git/x.md": "g"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	l, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Index || len(l.Topics) != 2 || l.Topics[0] != "b.md" || l.Topics[1] != "sub/a.md" || len(l.Other) != 1 {
		t.Fatalf("listing %+v", l)
	}
	r, err := OpenReader(l.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, _, err := r.ReadFile("sub/a.md"); err != nil || string(b) != "a\n" {
		t.Fatalf("read %q %v", b, err)
	}
	if _, _, err := r.ReadFile("../escape.md"); err == nil {
		t.Fatal("read outside the memory dir")
	}
}
