package trust

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStoreTrustsExactContent(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "repo", ".dream.toml")
	content := "# team proxy\nbase_url = \"https://llm.example.internal/v1\"\nmodel = \"team-model\"\n"
	writeFile(t, project, content)
	s := Open(filepath.Join(dir, "state", "dream", FileName))
	if s.Trusted(project, []byte(content)) {
		t.Fatal("trusted before dream trust")
	}
	e, err := s.Add(project)
	if err != nil {
		t.Fatal(err)
	}
	if e.SHA256 != Digest([]byte(content)) || !filepath.IsAbs(e.Path) {
		t.Errorf("entry %+v", e)
	}
	if !s.Trusted(project, []byte(content)) {
		t.Error("not trusted after Add")
	}
	// The bytes judged are the bytes given: one more byte is another file.
	if s.Trusted(project, []byte(content+"\n")) {
		t.Error("changed content still trusted")
	}
	// Reached through a symlinked directory, it is the same file.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "repo"), link); err != nil {
		t.Fatal(err)
	}
	if !s.Trusted(filepath.Join(link, ".dream.toml"), []byte(content)) {
		t.Error("the same file through a symlink is not trusted")
	}
	// Another file with the same content is not trusted.
	other := filepath.Join(dir, "other", ".dream.toml")
	writeFile(t, other, content)
	if s.Trusted(other, []byte(content)) {
		t.Error("trust leaked to another path with the same content")
	}
	// Re-trusting replaces, never duplicates.
	if _, err := s.Add(project); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v; want one entry", list, err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("store mode %v, %v; want 0600", fi, err)
	}
	removed, err := s.Remove(project)
	if err != nil || !removed {
		t.Fatalf("Remove = %v, %v", removed, err)
	}
	if s.Trusted(project, []byte(content)) {
		t.Error("trusted after Remove")
	}
	if removed, _ := s.Remove(project); removed {
		t.Error("second Remove removed something")
	}
}

// TestStoreFailsClosed: a corrupt, unreadable or absent store trusts
// nothing; Add refuses to overwrite a corrupt store.
func TestStoreFailsClosed(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, ".dream.toml")
	writeFile(t, project, "model = \"m\"\n")
	store := filepath.Join(dir, "state", FileName)
	writeFile(t, store, "{not json")
	s := Open(store)
	if s.Trusted(project, []byte("model = \"m\"\n")) {
		t.Error("a corrupt store trusted a file")
	}
	if _, err := s.Add(project); err == nil {
		t.Error("Add over a corrupt store succeeded")
	}
	if b, _ := os.ReadFile(store); string(b) != "{not json" {
		t.Errorf("the corrupt store was overwritten: %q", b)
	}
	if (*Store)(nil).Trusted(project, nil) || Open("").Trusted(project, nil) {
		t.Error("no store trusted a file")
	}
	if _, err := Open(filepath.Join(dir, "s2", FileName)).Add(filepath.Join(dir, "missing.toml")); err == nil {
		t.Error("trusted a missing file")
	}
	if _, err := Open(filepath.Join(dir, "s2", FileName)).Add(dir); err == nil {
		t.Error("trusted a directory")
	}
}

// TestConcurrentAdds: trusting many files at once from many goroutines
// loses none (the store is locked and written atomically).
func TestConcurrentAdds(t *testing.T) {
	dir := t.TempDir()
	s := Open(filepath.Join(dir, "state", FileName))
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		p := filepath.Join(dir, "repo", string(rune('a'+i)), ".dream.toml")
		writeFile(t, p, "min_hours = 12\n")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Add(p); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	list, err := s.List()
	if err != nil || len(list) != n {
		t.Fatalf("List = %d entries, %v; want %d", len(list), err, n)
	}
}

// TestDefaultPath: the store sits in dream's default state dir (which
// settings.StateDir resolves from the XDG variables), never elsewhere.
func TestDefaultPath(t *testing.T) {
	if got := DefaultPath("/x/state/dream"); got != filepath.Join("/x/state/dream", FileName) {
		t.Errorf("DefaultPath = %s", got)
	}
	if got := DefaultPath(""); got != "" {
		t.Errorf("no state dir: %q", got)
	}
}

func TestCheckWritableDir(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".ssh", ".claude/projects/-repo/memory", ".codex/memories", ".gemini/tmp/abc/memory", "notes/memory", ".config/gh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(home, "notes", "keys")
	if err := os.Symlink(filepath.Join(home, ".ssh"), link); err != nil {
		t.Fatal(err)
	}
	gpg := filepath.Join(t.TempDir(), "gpg")
	env := func(k string) (string, bool) {
		if k == "GNUPGHOME" {
			return gpg, true
		}
		return "", false
	}
	tests := []struct {
		dir      string
		relation string // "" allowed
	}{
		{filepath.Join(home, ".ssh"), "is"},
		{filepath.Join(home, ".ssh", "sub"), "is inside"},
		{filepath.Join(home, ".ssh") + "/", "is"},
		{filepath.Join(home, "notes", "..", ".ssh"), "is"},
		{home, "contains"},
		{"/", "contains"},
		{filepath.Join(home, ".config"), "contains"},
		{filepath.Join(home, ".config", "gh", "hosts"), "is inside"},
		{filepath.Join(home, ".aws"), "is"},
		{filepath.Join(home, ".gnupg", "private-keys-v1.d"), "is inside"},
		{filepath.Join(home, ".claude"), "contains"},
		{filepath.Join(home, ".codex"), "contains"},
		{filepath.Join(home, ".gemini"), "contains"},
		{link, "is"},
		{gpg, "is"},
		{filepath.Join(home, ".claude", "projects", "-repo", "memory"), ""},
		{filepath.Join(home, ".codex", "memories"), ""},
		{filepath.Join(home, ".gemini", "tmp", "abc", "memory"), ""},
		{filepath.Join(home, "notes", "memory"), ""},
		{filepath.Join(home, ".sshx"), ""},
		{filepath.Join(home, ".local", "state", "dream"), ""},
	}
	for _, tt := range tests {
		err := CheckWritableDir("memory dir", tt.dir, env, home)
		var ce *CredentialDirError
		switch {
		case tt.relation == "" && err != nil:
			t.Errorf("%s refused: %v", tt.dir, err)
		case tt.relation != "" && (!errors.Is(err, ErrCredentialDir) || !errors.As(err, &ce)):
			t.Errorf("%s allowed (%v), want %q a credential path", tt.dir, err, tt.relation)
		case tt.relation != "" && ce.Relation != tt.relation:
			t.Errorf("%s: relation %q (%v), want %q", tt.dir, ce.Relation, err, tt.relation)
		}
	}
}
