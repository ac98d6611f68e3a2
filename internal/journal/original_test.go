package journal

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Original serves a file's start version from the memory while it is
// untouched, and says so once someone edits it; a file that did not exist
// at Begin did not exist.
func TestOriginalTellsIntactFromEdited(t *testing.T) {
	for _, linked := range []bool{false, true} {
		root := t.TempDir()
		mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
		writeTree(t, mem, map[string]string{"MEMORY.md": "# Memory\n\n- [Ops](ops.md)\n", "ops.md": "# Ops\n\n1. 先备份。\n2. Deploy.\n"})
		txn, err := BeginWith(state, mem, "orig", Options{LinkUnchanged: linked})
		if err != nil {
			t.Fatal(err)
		}
		// The dream replaces its staged ops.md: the original is untouched.
		tmp := filepath.Join(txn.Dir(), "ops.md.new")
		if err := os.WriteFile(tmp, []byte("# Ops\n\n1. Deploy.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(txn.Dir(), "ops.md")); err != nil {
			t.Fatal(err)
		}
		if p, existed, intact := txn.Original("ops.md"); !existed || !intact || p != filepath.Join(txn.MemoryDir(), "ops.md") {
			t.Errorf("linked=%v: untouched original: %q %v %v", linked, p, existed, intact)
		}
		if b, existed, intact, err := txn.ReadOriginal("ops.md"); err != nil || !existed || !intact || string(b) != "# Ops\n\n1. 先备份。\n2. Deploy.\n" {
			t.Errorf("linked=%v: ReadOriginal of the untouched original: %q %v %v %v", linked, b, existed, intact, err)
		}
		// The user edits MEMORY.md in place while the dream runs.
		later := time.Now().Add(2 * time.Second)
		if err := os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("# Memory\n\n- [Ops](ops.md)\n- mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(mem, "MEMORY.md"), later, later)
		if _, existed, intact := txn.Original("MEMORY.md"); !existed || intact {
			t.Errorf("linked=%v: an edited original counts as intact (%v %v)", linked, existed, intact)
		}
		if b, existed, intact, err := txn.ReadOriginal("MEMORY.md"); err != nil || !existed || intact || b != nil {
			t.Errorf("linked=%v: ReadOriginal of an edited original: %q %v %v %v", linked, b, existed, intact, err)
		}
		if _, existed, _ := txn.Original("new.md"); existed {
			t.Errorf("linked=%v: a file created later existed at Begin", linked)
		}
		if _, existed, _, _ := txn.ReadOriginal("new.md"); existed {
			t.Errorf("linked=%v: ReadOriginal: a file created later existed at Begin", linked)
		}
		// A symlink put where the original was is never followed as it.
		outside := filepath.Join(root, "outside.md")
		os.WriteFile(outside, []byte("# Ops\n\n1. 先备份。\n2. Deploy.\n"), 0o644)
		os.Remove(filepath.Join(mem, "ops.md"))
		os.Symlink(outside, filepath.Join(mem, "ops.md"))
		if b, existed, intact, _ := txn.ReadOriginal("ops.md"); !existed || intact || b != nil {
			t.Errorf("linked=%v: ReadOriginal through a symlink: %q %v %v", linked, b, existed, intact)
		}
		txn.Discard()
	}
}

// After Freeze the changes are found once and reused; Keep still takes a
// path out.
func TestFrozenChangesReusedUntilKeep(t *testing.T) {
	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	writeTree(t, mem, map[string]string{"a.md": "# A\n", "b.md": "# B\n"})
	txn, err := BeginWith(state, mem, "frozen", Options{LinkUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Discard()
	for _, p := range []string{"a.md", "b.md"} {
		os.Remove(filepath.Join(txn.Dir(), p))
		if err := os.WriteFile(filepath.Join(txn.Dir(), p), []byte("# changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	txn.Freeze()
	first, err := txn.Changes()
	if err != nil || len(first) != 2 {
		t.Fatalf("changes %+v %v", first, err)
	}
	first[0].Path = "mutated by the caller"
	// Written after the freeze, by no one the transaction knows: not seen.
	writeTree(t, txn.Dir(), map[string]string{"c.md": "# C\n"})
	again, _ := txn.Changes()
	if len(again) != 2 || again[0].Path != "a.md" {
		t.Fatalf("frozen changes were not reused as found: %+v", again)
	}
	if err := txn.Keep("b.md"); err != nil {
		t.Fatal(err)
	}
	after, _ := txn.Changes()
	if len(after) != 2 || after[0].Path != "a.md" || after[1].Path != "c.md" {
		t.Fatalf("after Keep: %+v, want a.md and c.md", after)
	}
}
