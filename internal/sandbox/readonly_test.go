package sandbox

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestReadOnlyResolve(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	memDisplay := filepath.Join(repo, ".agent", "memory") // memory nested in the repo
	memReal := filepath.Join(base, "staging")
	sessions := filepath.Join(base, "sessions")
	for _, d := range []string{memDisplay, memReal, sessions, filepath.Join(base, "repo-evil")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(memReal, "a.md"), []byte("staged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(repo, "up")); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(
		NamedRoot{Name: "repo", RealDir: repo},
		NamedRoot{Name: "memory", RealDir: memReal, DisplayDir: memDisplay},
		NamedRoot{Name: "sessions", RealDir: sessions},
		NamedRoot{Name: "missing", RealDir: filepath.Join(base, "nope")},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := len(r.Roots()); got != 3 {
		t.Fatalf("opened %d roots, want 3 (missing skipped)", got)
	}
	tests := []struct {
		in, root, rel string
	}{
		{"main.go", "repo", "main.go"},
		{".", "repo", "."},
		{repo, "repo", "."},
		{filepath.Join(memDisplay, "a.md"), "memory", "a.md"},
		{".agent/memory/a.md", "memory", "a.md"},
		{filepath.Join(memReal, "a.md"), "memory", "a.md"},
		{filepath.Join(sessions, "s.jsonl"), "sessions", "s.jsonl"},
		{"../sessions/x.jsonl", "sessions", "x.jsonl"},
		{"../repo-evil/x", "", ""},
		{"/etc/passwd", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		root, rel, err := r.Resolve(tt.in)
		if tt.root == "" {
			if err == nil {
				t.Errorf("Resolve(%q) = %s:%s, want error", tt.in, root.Name, rel)
			}
			continue
		}
		if err != nil || root.Name != tt.root || rel != tt.rel {
			t.Errorf("Resolve(%q) = %s:%q, %v; want %s:%q", tt.in, root.Name, rel, err, tt.root, tt.rel)
		}
	}
	mem, _ := r.Root("memory")
	f, err := r.Open(mem, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "staged" {
		t.Errorf("memory read %q, want the staging copy", b)
	}
	if got := mem.Display("a.md"); got != filepath.Join(memDisplay, "a.md") {
		t.Errorf("Display = %q", got)
	}
	repoRoot, _ := r.Root("repo")
	if _, err := r.Open(repoRoot, "up/sessions"); err == nil {
		t.Error("a symlink leaving the root must not be followed")
	}
	if _, err := r.Stat(repoRoot, "../x"); !errors.Is(err, ErrOutside) {
		t.Errorf("Stat(../x) error = %v", err)
	}
	if _, err := r.FS(NamedRoot{Name: "other"}); err == nil {
		t.Error("FS of an unknown root should fail")
	}
}

func TestReadOnlyEmpty(t *testing.T) {
	r, err := OpenReadOnly()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Resolve("x"); err == nil {
		t.Error("Resolve with no roots should fail")
	}
}

// A memory directory that is also the repository (dream run --memory-dir .
// in a folder of notes, with --repo defaulting to the current directory)
// must still resolve memory paths to the memory root, which is the staging
// copy the dream writes: otherwise reads show the user's unstaged files and
// never record them for edit.
func TestReadOnlyResolveMemoryEqualsRepo(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "notes")
	staging := filepath.Join(base, "staging")
	for _, d := range []string{dir, staging} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenReadOnly(
		NamedRoot{Name: "repo", RealDir: dir},
		NamedRoot{Name: "memory", RealDir: staging, DisplayDir: dir},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	root, rel, err := r.Resolve(filepath.Join(dir, "a.md"))
	if err != nil {
		t.Fatal(err)
	}
	if root.Name != "memory" || rel != "a.md" {
		t.Errorf("Resolve = %s %q, want memory \"a.md\"", root.Name, rel)
	}

	// Unstaged, the memory root (opened after the repository) still wins.
	r2, err := OpenReadOnly(NamedRoot{Name: "repo", RealDir: dir}, NamedRoot{Name: "memory", RealDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if root, _, err := r2.Resolve("a.md"); err != nil || root.Name != "memory" {
		t.Errorf("unstaged Resolve = %s, %v; want memory", root.Name, err)
	}
}
