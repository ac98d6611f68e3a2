package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFileAtomic: durable or not, the write creates the parents,
// replaces the file with the mode asked for (the umask does not narrow it)
// and leaves no temporary file.
func TestWriteFileAtomic(t *testing.T) {
	for _, durable := range []bool{true, false} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "a", "b", "f.md")
			for _, c := range []struct {
				data string
				perm os.FileMode
			}{{"# one\n", 0o600}, {"# two\n- 中文\n", 0o640}, {"", 0o644}} {
				if err := WriteFileAtomic(p, []byte(c.data), c.perm, durable); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(p)
				fi, _ := os.Stat(p)
				if err != nil || string(b) != c.data || fi.Mode().Perm() != c.perm {
					t.Fatalf("after writing %q: content %q mode %v, %v", c.data, b, fi.Mode().Perm(), err)
				}
			}
			ents, _ := os.ReadDir(filepath.Dir(p))
			if len(ents) != 1 {
				t.Errorf("dir holds %d entries, want just f.md: %v", len(ents), ents)
			}
		})
	}
}

func TestWriteFileAtomicIntoFileFails(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "file")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(f, "child"), []byte("y"), 0o644, true); err == nil {
		t.Fatal("writing below a regular file succeeded")
	}
	if b, _ := os.ReadFile(f); string(b) != "x" {
		t.Fatalf("the file in the way changed: %q", b)
	}
}

func TestWriteFileAtomicInStaysInRoot(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteFileAtomicIn(root, filepath.Join("a", "f.txt"), []byte("one"), 0o640, true); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a", "f.txt")); err != nil || string(b) != "one" {
		t.Fatalf("content %q, %v", b, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a", "f.txt")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if err := WriteFileAtomicIn(root, filepath.Join("link", "f.txt"), []byte("x"), 0o644, false); err == nil {
		t.Fatal("writing through a symlink out of the root succeeded")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the root: %v", ents)
	}
}

func TestRealParents(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for rel, want := range map[string]bool{
		"top.md":            true,
		"a/b/c.md":          true,
		"a/new/deeper/x.md": true,
		"link/x.md":         false,
		"a/../link/x.md":    false,
		"file/x.md":         false,
	} {
		if got := RealParents(root, filepath.FromSlash(rel)); got != want {
			t.Errorf("RealParents(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestExpandHome(t *testing.T) {
	for _, tt := range []struct{ in, home, want string }{
		{"~", "/h", "/h"},
		{"~/x/y", "/h", "/h/x/y"},
		{"~user/x", "/h", "~user/x"},
		{"/abs", "/h", "/abs"},
		{"~/x", "", "~/x"},
	} {
		if got := ExpandHome(tt.in, tt.home); got != tt.want {
			t.Errorf("ExpandHome(%q, %q) = %q, want %q", tt.in, tt.home, got, tt.want)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"20261201-120000-3f9a", true}, {"20261201-120000-3f9a-review", true}, {"a.b_c-D9", true},
		{"", false}, {".", false}, {"..", false}, {".hidden", false}, {"a/b", false}, {`a\b`, false},
		{"a b", false}, {"é", false}, {"梦", false}, {"x\x00", false}, {strings.Repeat("x", 65), false},
	} {
		if got := ValidName(tc.name, 64); got != tc.ok {
			t.Errorf("ValidName(%q, 64) = %v, want %v", tc.name, got, tc.ok)
		}
	}
	if !ValidName(strings.Repeat("x", 128), 128) || ValidName(strings.Repeat("x", 129), 128) {
		t.Error("the length bound is not maxLen")
	}
}
