//go:build unix

package offline

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteNewIn pins the direct create: perm exactly (whatever the umask),
// nothing written over an existing name, and no link followed.
func TestWriteNewIn(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	data := []byte("# Deploys\n\n- Deploys run from main after review.\n")
	if ok, err := writeNewIn(root, filepath.Join("projects", "a.md"), data, 0o666); !ok || err != nil {
		t.Fatalf("new file: %v %v", ok, err)
	}
	info, err := os.Stat(filepath.Join(dir, "projects", "a.md"))
	if err != nil || info.Mode().Perm() != 0o666 {
		t.Fatalf("mode: %v %v", info, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "projects", "a.md")); string(got) != string(data) {
		t.Fatalf("content %q", got)
	}
	// An existing name is left alone: the caller replaces it atomically.
	if ok, err := writeNewIn(root, filepath.Join("projects", "a.md"), []byte("other"), 0o644); ok || err != nil {
		t.Fatalf("existing file: %v %v", ok, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "projects", "a.md")); string(got) != string(data) {
		t.Fatalf("an existing file was written: %q", got)
	}
	// A link at the name, even to a file that does not exist, is not
	// followed (O_EXCL fails on it).
	target := filepath.Join(elsewhere, "b.md")
	if err := os.Symlink(target, filepath.Join(dir, "b.md")); err != nil {
		t.Skip(err)
	}
	if ok, err := writeNewIn(root, "b.md", data, 0o644); ok || err != nil {
		t.Fatalf("link: %v %v", ok, err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("wrote through a link: %v", err)
	}
}

// TestWriteDirReplacesWhatItHolds: a write dir that already holds a file
// the run writes (a stale one, or a link to elsewhere) gets the run's
// bytes at that name, replaced atomically, and nothing outside changes.
func TestWriteDirReplacesWhatItHolds(t *testing.T) {
	mem, out, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	src := "# Deploys\n\n- Deploys run from main after review.\n- Deploys run from main after review.\n"
	want := "# Deploys\n\n- Deploys run from main after review.\n"
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		if err := os.WriteFile(filepath.Join(mem, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "a.md"), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(elsewhere, "kept.md")
	if err := os.WriteFile(outside, []byte("not memory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(out, "b.md")); err != nil {
		t.Skip(err)
	}
	rep, err := Run(context.Background(), Options{MemoryDir: mem, WriteDir: out, Now: testNow, Layout: LayoutFor("")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.FilesTouched) != 4 { // and the new index
		t.Fatalf("touched %v", rep.FilesTouched)
	}
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		info, err := os.Lstat(filepath.Join(out, name))
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o644 {
			t.Fatalf("%s: %v %v", name, info, err)
		}
		if got, _ := os.ReadFile(filepath.Join(out, name)); string(got) != want {
			t.Fatalf("%s: %q", name, got)
		}
	}
	if got, _ := os.ReadFile(outside); string(got) != "not memory" {
		t.Fatalf("wrote through a link: %q", got)
	}
}
