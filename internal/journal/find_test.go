package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParkedMemoryDirs: a parked transaction is found by its id or a
// prefix, across memory dirs; one being staged (not parked) or discarded is
// not.
func TestParkedMemoryDirs(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "state [1]*") // a path, not a glob pattern
	mkMem := func(name string) string {
		mem := filepath.Join(root, name)
		if err := os.MkdirAll(mem, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("# Memory\n\n- [笔记](notes.md)\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		abs, _ := absDir(mem)
		return abs
	}
	a, b := mkMem("notes a"), mkMem("notes-b")
	park := func(mem, id string) *Txn {
		tx, err := Begin(state, mem, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.ParkFor("review requested"); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	park(a, "20261201-120000-aaaa")
	park(b, "20261201-120500-bbbb")
	gone := park(b, "20261201-130000-cccc")
	if err := gone.Discard(); err != nil {
		t.Fatal(err)
	}
	open, err := Begin(state, a, "20261201-140000-dddd") // still staging
	if err != nil {
		t.Fatal(err)
	}
	defer open.Discard()
	for id, want := range map[string]string{
		"20261201-120000-aaaa": a,
		"20261201-1205":        b,
		"20261201-12":          a + "|" + b,
		"20261201-13":          "",
		"20261201-14":          "",
		"nope":                 "",
		"":                     "",
	} {
		got, err := ParkedMemoryDirs(state, id)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("ParkedMemoryDirs(%q) = %q, %v; want %q", id, got, err, want)
		}
	}
}
