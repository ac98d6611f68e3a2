package memory

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadThroughSymlinkedRoot(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, IndexFile), []byte("- [A](a.md) — a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	d, err := Load(link)
	if err != nil {
		t.Fatal(err)
	}
	if d.Index == nil || len(d.Topics) != 1 || d.Topics[0].Path != "a.md" {
		t.Errorf("Load through a symlinked root: index %v, topics %+v", d.Index != nil, d.Topics)
	}
}

func TestLocalTargetUnescapedPercent(t *testing.T) {
	if got, ok := LocalTarget("100%-sure.md"); !ok || got != "100%-sure.md" {
		t.Errorf("LocalTarget(100%%-sure.md) = %q, %v", got, ok)
	}
	if got, ok := LocalTarget("c%23-notes.md"); !ok || got != "c#-notes.md" {
		t.Errorf("LocalTarget(c%%23-notes.md) = %q, %v", got, ok)
	}
	if _, ok := LocalTarget("http://[bad%zz/x.md"); ok {
		t.Error("a malformed URL is local")
	}
}
