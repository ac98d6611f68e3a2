package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzCheckSpelling: with one file in the memory, a second name is refused
// exactly when it is another spelling of the first (same key, other
// bytes); and the key ignores letter case and Unicode normalisation.
func FuzzCheckSpelling(f *testing.F) {
	for _, seed := range [][2]string{
		{"build.md", "Build.md"}, {"MEMORY.md", "MEMORY.MD"}, {"café.md", norm.NFD.String("café.md")},
		{"straße.md", "STRASSE.md"}, {"ǅ.md", "ǆ.md"}, {"ı.md", "I.md"}, {"K.md", "\u212a.md"},
		{"a.md", "a.md"}, {"a.md", "b.md"}, {"\u0345.md", "\u03b9.md"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, have, want string) {
		if !utf8.ValidString(have) || !utf8.ValidString(want) {
			return
		}
		k := nameKey(want)
		if !utf8.ValidString(k) {
			t.Fatalf("nameKey(%q) = %q is not UTF-8", want, k)
		}
		for _, v := range []string{norm.NFC.String(want), norm.NFD.String(want), asciiUpper(want)} {
			if nameKey(v) != k {
				t.Fatalf("nameKey(%q) = %q, but nameKey(%q) = %q", v, nameKey(v), want, k)
			}
		}
		if strings.ContainsAny(have+want, "/\\") || CheckName(have) != nil || CheckName(want) != nil ||
			checkMemoryRel(have) != nil || checkMemoryRel(want) != nil || len(have) > 200 || len(want) > 200 {
			return
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, have), []byte("x"), 0o644); err != nil {
			return // a name this file system refuses
		}
		m, err := OpenMemory(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		err = m.CheckSpelling(want)
		collides := want != have && nameKey(want) == nameKey(have)
		switch {
		case collides && !errors.Is(err, ErrNameCollides):
			t.Fatalf("%q beside %q: %v, want a collision", want, have, err)
		case !collides && err != nil:
			t.Fatalf("%q beside %q: %v", want, have, err)
		}
	})
}

func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}
