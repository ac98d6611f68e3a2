package journal

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// preTree is a small memory dir: an index, topic files, a subdir, the lock
// file and a host's .git dir, which must never be journaled.
func preTree() map[string]string {
	return map[string]string{
		"MEMORY.md":          "# Memory\n- [User](user.md) who the user is\n- [A](project_a.md) project A\n- [B](project_b.md) project B\n- [Feedback](feedback.md) feedback\n",
		"user.md":            "---\nname: user\n---\nThe user likes Go.\nThe user likes Go.\n",
		"project_a.md":       "---\nname: project_a\n---\nRelease is next Thursday.\n",
		"project_b.md":       "---\nname: project_b\n---\nUses make.\n",
		"feedback.md":        "---\nname: feedback\n---\nprefer small diffs\n",
		"topics/x.md":        "x one\nx two\nx three\n",
		"topics/y.md":        "y\n",
		LockName:             "12345",
		".git/HEAD":          "ref: refs/heads/main\n",
		".git/objects/ab/cd": "blob",
	}
}

// dreamEdits is what the "agent" does: 4 modifies, 3 adds, 1 delete.
func dreamEdits() map[string]string {
	return map[string]string{
		"MEMORY.md":     "# Memory\n- [User](user.md) who the user is\n- [A](project_a.md) project A (release 2025-03-13)\n- [B](project_b.md) project B\n- [C](project_c.md) project C\n",
		"user.md":       "---\nname: user\n---\nThe user likes Go.\n",
		"project_a.md":  "---\nname: project_a\n---\nRelease is 2025-03-13.\n",
		"topics/x.md":   "x one\nx 2\nx three\n",
		"project_c.md":  "---\nname: project_c\n---\nNew.\n",
		"topics/z.md":   "z\n",
		"new/deep/n.md": "deep\n",
		"feedback.md":   "",
	}
}

func setup(t *testing.T) (state, mem string) {
	t.Helper()
	state, mem = t.TempDir(), t.TempDir()
	writeTree(t, mem, preTree())
	return state, mem
}

func TestBeginStagesMemoryOnly(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	got := readTree(t, txn.Dir())
	want := preTree()
	delete(want, LockName)
	delete(want, ".git/HEAD")
	delete(want, ".git/objects/ab/cd")
	if !sameTree(got, want) {
		t.Fatalf("staging holds %s, want %s", describe(got), describe(want))
	}
	rec, err := readRecord(filepath.Join(filepath.Dir(txn.Dir())))
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != StateStaging || rec.PID != os.Getpid() || len(rec.Base) != len(want) || rec.CreatedAt.IsZero() {
		t.Fatalf("record = %+v", rec)
	}
	if chs, err := txn.Changes(); err != nil || len(chs) != 0 {
		t.Fatalf("fresh txn changes = %v, %v", chs, err)
	}
}

func TestBeginErrors(t *testing.T) {
	state, mem := setup(t)
	file := filepath.Join(mem, "user.md")
	cases := []struct {
		name, state, mem, id, want string
	}{
		{"bad id", state, mem, "../x", "invalid transaction id"},
		{"empty id", state, mem, "", "invalid transaction id"},
		{"missing dir", state, filepath.Join(mem, "nope"), "d", "memory dir"},
		{"not a dir", state, file, "d", "not a directory"},
		{"no state dir", "", mem, "d", "state dir is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Begin(c.state, c.mem, c.id)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Begin error = %v, want it to mention %q", err, c.want)
			}
		})
	}
	if _, err := Begin(state, mem, "dup"); err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(state, mem, "dup"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate Begin error = %v", err)
	}
}

func TestCommitAppliesChanges(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	chs, err := txn.Changes()
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{"MEMORY.md", Modified, 2, 2},
		{"feedback.md", Deleted, 0, 4},
		{"new/deep/n.md", Added, 1, 0},
		{"project_a.md", Modified, 1, 1},
		{"project_c.md", Added, 4, 0},
		{"topics/x.md", Modified, 1, 1},
		{"topics/z.md", Added, 1, 0},
		{"user.md", Modified, 0, 1},
	}
	if len(chs) != len(want) {
		t.Fatalf("changes = %+v, want %+v", chs, want)
	}
	for i := range want {
		if chs[i] != want[i] {
			t.Errorf("change %d = %+v, want %+v", i, chs[i], want[i])
		}
	}
	diff, err := txn.Diff()
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "commit.diff", diff)

	got, err := txn.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Commit returned %v", got)
	}
	if tree, exp := readTree(t, mem), after(preTree(), dreamEdits()); !sameTree(tree, exp) {
		t.Fatalf("memory after commit: %s, want %s", describe(tree), describe(exp))
	}
	if e := journalEntries(t, state, mem); len(e) != 0 {
		t.Fatalf("journal left %v", e)
	}
	if _, err := txn.Commit(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Commit error = %v, want ErrClosed", err)
	}
}

func TestCommitDeleteRemovesEmptiedDir(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), map[string]string{"topics/x.md": "", "topics/y.md": ""})
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mem, "topics")); !os.IsNotExist(err) {
		t.Fatalf("emptied topics/ still there: %v", err)
	}
}

func TestCommitNoChanges(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	chs, err := txn.Commit()
	if err != nil || len(chs) != 0 {
		t.Fatalf("Commit = %v, %v", chs, err)
	}
	if !sameTree(readTree(t, mem), preTree()) {
		t.Fatal("memory changed")
	}
	if e := journalEntries(t, state, mem); len(e) != 0 {
		t.Fatalf("journal left %v", e)
	}
}

func TestCommitConflict(t *testing.T) {
	cases := []struct {
		name  string
		hand  map[string]string // applied to the memory dir during the dream
		wants []string
	}{
		{"edited", map[string]string{"user.md": "hand\n"}, []string{"user.md (edited)"}},
		{"deleted", map[string]string{"project_a.md": ""}, []string{"project_a.md (deleted)"}},
		{"created at an added path", map[string]string{"project_c.md": "mine\n"}, []string{"project_c.md (created)"}},
		{"two files", map[string]string{"MEMORY.md": "x\n", "user.md": "y\n"}, []string{"MEMORY.md (edited)", "user.md (edited)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state, mem := setup(t)
			txn, err := Begin(state, mem, "d1")
			if err != nil {
				t.Fatal(err)
			}
			edit(t, txn.Dir(), dreamEdits())
			edit(t, mem, c.hand)
			before := readTree(t, mem)
			_, err = txn.Commit()
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("Commit error = %v, want ErrConflict", err)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if !sameTree(readTree(t, mem), before) {
				t.Fatal("a refused commit changed memory")
			}
			if err := txn.Discard(); err != nil {
				t.Fatal(err)
			}
			if e := journalEntries(t, state, mem); len(e) != 0 {
				t.Fatalf("journal left %v", e)
			}
		})
	}
}

func TestCommitToleratesNewUnrelatedFile(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	writeTree(t, mem, map[string]string{"written_meanwhile.md": "new\n"})
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	want := after(preTree(), dreamEdits())
	want["written_meanwhile.md"] = "new\n"
	if got := readTree(t, mem); !sameTree(got, want) {
		t.Fatalf("memory = %s", describe(got))
	}
}

func TestDiscardLeavesMemory(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	if err := txn.Discard(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Discard(); err != nil {
		t.Fatalf("second Discard: %v", err)
	}
	if !sameTree(readTree(t, mem), preTree()) {
		t.Fatal("Discard changed memory")
	}
	if _, err := os.Stat(txn.Dir()); !os.IsNotExist(err) {
		t.Fatalf("staging still exists: %v", err)
	}
	if _, err := txn.Commit(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Commit after Discard = %v", err)
	}
}

func TestParkLoadCommit(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "20250301-abc")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	if err := txn.Park(); err != nil {
		t.Fatal(err)
	}
	other, err := Begin(state, mem, "20250302-def")
	if err != nil {
		t.Fatal(err)
	}
	infos, err := ListParked(state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].ID != "20250301-abc" || infos[0].State != StateParked || infos[0].PID != os.Getpid() {
		t.Fatalf("ListParked = %+v", infos)
	}
	// A parked txn survives Recover; a staging one does not.
	res, err := Recover(state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Discarded) != 1 || res.Discarded[0] != other.ID() {
		t.Fatalf("Recover = %+v", res)
	}
	back, err := Load(state, mem, "20250301")
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != "20250301-abc" {
		t.Fatalf("Load id = %s", back.ID())
	}
	if _, err := back.Commit(); err != nil {
		t.Fatal(err)
	}
	if !sameTree(readTree(t, mem), after(preTree(), dreamEdits())) {
		t.Fatal("parked commit did not land")
	}
}

func TestLoadErrors(t *testing.T) {
	state, mem := setup(t)
	for _, id := range []string{"a1", "a2", "b1"} {
		txn, err := Begin(state, mem, id)
		if err != nil {
			t.Fatal(err)
		}
		if id != "b1" {
			if err := txn.Park(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct{ id, want string }{
		{"zz", "no such transaction"},
		{"a", "ambiguous"},
		{"b1", "only parked"},
		{"", "no such transaction"},
	}
	for _, c := range cases {
		_, err := Load(state, mem, c.id)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%q) = %v, want %q", c.id, err, c.want)
		}
	}
	if _, err := Load(state, mem, "a2"); err != nil {
		t.Errorf("Load exact id: %v", err)
	}
}

func TestDiscardRefusedWhileCommitting(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	txn.rec.State = StateCommitting
	if err := txn.Discard(); err == nil {
		t.Fatal("Discard of a committing txn succeeded")
	}
}

func TestMemKeyStableAcrossSpellings(t *testing.T) {
	mem := t.TempDir()
	a, err := MemKey(mem)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MemKey(mem + string(filepath.Separator) + "." + string(filepath.Separator))
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(mem, link); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	c, err := MemKey(link)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a != c || len(a) != 16 {
		t.Fatalf("keys %q %q %q", a, b, c)
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("%s mismatch\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// TestCommitNeverWritesThroughASymlink: the memory dir holds a symlink to a
// directory outside it. Staging keeps the link, so a write through it is
// refused there; and a commit of a path whose directory is a symlink is
// refused before anything is written.
func TestCommitNeverWritesThroughASymlink(t *testing.T) {
	state, mem, outside := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(mem, "a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(mem, "link")); err != nil {
		t.Fatal(err)
	}
	txn, err := Begin(state, mem, "sym1")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(txn.Dir(), "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("staging lacks the symlink: %v %v", fi, err)
	}
	// Simulate a writer that replaced the staged link by a real directory.
	os.Remove(filepath.Join(txn.Dir(), "link"))
	if err := os.MkdirAll(filepath.Join(txn.Dir(), "link"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(txn.Dir(), "link", "x.md"), []byte("escape\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit through a symlinked dir: err = %v, want ErrConflict", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the commit wrote outside the memory dir: %v", ents)
	}
	if HasPending(state, mem) {
		if err := txn.Discard(); err != nil {
			t.Fatal(err)
		}
	}
}
