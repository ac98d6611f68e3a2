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
