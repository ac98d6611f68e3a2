package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/fsutil"
)

// newMemory makes a display dir and a separate real (staging) dir, like the
// journal does, plus a sibling "memory-evil" dir for prefix tricks.
func newMemory(t *testing.T) (m *Memory, real, display string) {
	t.Helper()
	base := t.TempDir()
	real = filepath.Join(base, "staging")
	display = filepath.Join(base, "memory")
	for _, d := range []string{real, display, filepath.Join(base, "memory-evil")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m, err := OpenMemory(real, display)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, real, display
}

func TestMemoryResolve(t *testing.T) {
	m, real, display := newMemory(t)
	base := filepath.Dir(display)
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr error
	}{
		{"relative", "topic.md", "topic.md", nil},
		{"relative nested", "a/b/../c.md", "a/c.md", nil},
		{"absolute display", filepath.Join(display, "x.md"), "x.md", nil},
		{"absolute real", filepath.Join(real, "sub", "y.md"), "sub/y.md", nil},
		{"dot slash", "./MEMORY.md", "MEMORY.md", nil},
		{"back in via dotdot", "../memory/z.md", "z.md", nil},
		{"dotdot escape", "../x", "", ErrOutside},
		{"deep dotdot escape", "a/../../../etc/passwd", "", ErrOutside},
		{"absolute outside", "/etc/passwd", "", ErrOutside},
		{"sibling prefix", filepath.Join(base, "memory-evil", "a.md"), "", ErrOutside},
		{"sibling prefix relative", "../memory-evil/a.md", "", ErrOutside},
		{"parent dir itself", base, "", ErrOutside},
		{"the dir itself", display, "", ErrForbidden},
		{"dot", ".", "", ErrForbidden},
		{"lock", ".consolidate-lock", "", ErrForbidden},
		{"lock upper", ".CONSOLIDATE-LOCK", "", ErrForbidden},
		{"lock mixed absolute", filepath.Join(display, ".Consolidate-Lock"), "", ErrForbidden},
		{"lock nested", "sub/.consolidate-lock", "", ErrForbidden},
		{"lock as dir", ".consolidate-lock/x.md", "", ErrForbidden},
		{"git config", ".git/config", "", ErrForbidden},
		{"git upper nested", "a/.GIT/HEAD", "", ErrForbidden},
		{"empty", "", "", nil},
		{"blank", "   ", "", nil},
		{"nul", "a\x00b.md", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Resolve(tt.in)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want an error", tt.in, got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Resolve(%q) error %v, want %v", tt.in, err, tt.wantErr)
			}
		})
	}
	_, err := m.Resolve("../x")
	if !strings.Contains(err.Error(), display) || !strings.Contains(err.Error(), `"../x"`) {
		t.Errorf("outside error should name the memory dir and the bad path: %v", err)
	}
}

func TestMemoryWriteFile(t *testing.T) {
	m, real, _ := newMemory(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "victim.md"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "victim.md"), filepath.Join(real, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(real, "outdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "inside.md"), []byte("in"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside.md", filepath.Join(real, "rel-link.md")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		rel     string
		wantErr bool
	}{
		{"new top-level", "new.md", false},
		{"new with parents", "a/b/c.md", false},
		{"symlink to outside file", "link.md", true},
		{"symlink to inside file", "rel-link.md", true},
		{"through symlinked dir", "outdir/evil.md", true},
		{"through symlinked dir nested", "outdir/sub/evil.md", true},
		{"lock", ".consolidate-lock", true},
		{"lock case", ".consolidate-LOCK", true},
		{"git", ".git/config", true},
		{"escape", "../x.md", true},
		{"absolute", "/tmp/x.md", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.WriteFile(tt.rel, []byte("hello"))
			if (err != nil) != tt.wantErr {
				t.Fatalf("WriteFile(%q) error = %v, wantErr %v", tt.rel, err, tt.wantErr)
			}
			if err == nil {
				got, err := os.ReadFile(filepath.Join(real, filepath.FromSlash(tt.rel)))
				if err != nil || string(got) != "hello" {
					t.Fatalf("file after write = %q, %v", got, err)
				}
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim.md")); string(b) != "keep" {
		t.Fatalf("outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "evil.md")); err == nil {
		t.Fatal("a file was created outside through a symlinked directory")
	}
	if _, err := os.Stat(filepath.Join(outside, "sub")); err == nil {
		t.Fatal("a directory was created outside through a symlinked directory")
	}
	entries, _ := os.ReadDir(real)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestMemoryWriteKeepsModeAndReplaces(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are not kept on Windows")
	}
	m, real, _ := newMemory(t)
	p := filepath.Join(real, "x.md")
	if err := os.WriteFile(p, []byte("old content that is longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile("x.md", []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	if b, _ := m.ReadFile("x.md"); string(b) != "new" {
		t.Errorf("content = %q", b)
	}
	if err := m.WriteFile("a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile("a/b.md", []byte("x")); err == nil {
		t.Error("writing below a regular file should fail")
	}
	if err := os.Mkdir(filepath.Join(real, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile("dir", []byte("x")); err == nil {
		t.Error("writing over a directory should fail")
	}
	if fi, err := m.Stat("x.md"); err != nil || fi.Size() != 3 {
		t.Errorf("Stat = %v, %v", fi, err)
	}
	if _, err := m.ReadFile(".consolidate-lock"); !errors.Is(err, ErrForbidden) {
		t.Errorf("ReadFile(lock) error = %v", err)
	}
}

func TestOpenMemoryErrors(t *testing.T) {
	if _, err := OpenMemory("", ""); err == nil {
		t.Error("empty dir should fail")
	}
	if _, err := OpenMemory(filepath.Join(t.TempDir(), "missing"), ""); err == nil {
		t.Error("missing dir should fail")
	}
}
