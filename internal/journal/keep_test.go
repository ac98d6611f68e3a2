package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// A kept path leaves the transaction, across a park and load, and its
// commit does not touch the memory's file.
func TestKeepLeavesPathOut(t *testing.T) {
	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string]string{"a.md": "# A\n\n- one\n", "b.md": "# B\n\n- 二\n"} {
		if err := os.WriteFile(filepath.Join(mem, p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	txn, err := Begin(state, mem, "keep1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a.md", "b.md"} {
		if err := os.WriteFile(filepath.Join(txn.Dir(), p), []byte("# changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Keep("b.md"); err != nil {
		t.Fatal(err)
	}
	if err := txn.Park(); err != nil {
		t.Fatal(err)
	}
	txn, err = Load(state, mem, "keep1")
	if err != nil {
		t.Fatal(err)
	}
	chs, err := txn.Changes()
	if err != nil || len(chs) != 1 || chs[0].Path != "a.md" {
		t.Fatalf("changes = %+v, %v; want a.md only", chs, err)
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(mem, "b.md")); string(b) != "# B\n\n- 二\n" {
		t.Errorf("b.md = %q: the kept file was written", b)
	}
	if b, _ := os.ReadFile(filepath.Join(mem, "a.md")); string(b) != "# changed\n" {
		t.Errorf("a.md = %q", b)
	}
}
