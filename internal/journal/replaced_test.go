//go:build linux

package journal

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// beginDream stages the dream's edits of the test memory in transaction
// d1, on a file system whose commits install by link (the only ones that
// keep what they replace).
func beginDream(t *testing.T) (state, mem string, txn *Txn) {
	t.Helper()
	state, mem = setup(t)
	if !leasesWork(t, mem) {
		t.Skip("this file system grants no leases: commits copy, and keep nothing")
	}
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	return state, mem, txn
}

// A commit that keeps what it replaced: the memory holds the dream's
// files, and the dir it returns holds the versions the renames replaced,
// byte for byte, as second names of the same inodes (nothing copied),
// outside the transactions; RemoveReplaced frees them and refuses any
// other dir. A commit that does not ask keeps nothing, and the kept files
// of a process that died before freeing them go with the next Recover.
func TestCommitKeepsReplacedFiles(t *testing.T) {
	modified := []string{}
	for p, body := range dreamEdits() {
		if _, ok := preTree()[p]; ok && body != "" {
			modified = append(modified, p)
		}
	}
	for _, keep := range []bool{true, false} {
		state, mem, txn := beginDream(t)
		old := map[uint64]string{} // inode of each file the dream modifies: its bytes before
		for _, p := range modified {
			info, err := os.Stat(filepath.Join(mem, p))
			if err != nil {
				t.Fatal(err)
			}
			old[info.Sys().(*syscall.Stat_t).Ino] = preTree()[p]
		}
		res, err := txn.CommitWith(CommitOptions{KeepReplaced: keep})
		if err != nil {
			t.Fatal(err)
		}
		if tree, exp := readTree(t, mem), after(preTree(), dreamEdits()); !sameTree(tree, exp) {
			t.Fatalf("keep=%v: memory after commit: %s, want %s", keep, describe(tree), describe(exp))
		}
		if !keep {
			if res.Replaced != "" || len(journalEntries(t, state, mem)) != 0 {
				t.Fatalf("a commit that did not ask kept %q; journal %v", res.Replaced, journalEntries(t, state, mem))
			}
			continue
		}
		if filepath.Base(res.Replaced) != replacedPrefix+"d1" {
			t.Fatalf("Replaced = %q", res.Replaced)
		}
		if e := journalEntries(t, state, mem); !slices.Equal(e, []string{replacedPrefix + "d1"}) {
			t.Fatalf("journal holds %v, want only the kept files", e)
		}
		kept := 0
		err = filepath.WalkDir(res.Replaced, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := os.Lstat(p)
			if err != nil {
				return err
			}
			body, ok := old[info.Sys().(*syscall.Stat_t).Ino]
			if got, err := os.ReadFile(p); err != nil || !ok || string(got) != body {
				t.Errorf("kept %s = %q (%v), not a replaced file's inode and bytes", p, got, err)
			}
			kept++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if kept != len(modified) {
			t.Fatalf("kept %d files, want the %d replaced", kept, len(modified))
		}
		if err := RemoveReplaced(mem); err == nil {
			t.Fatal("RemoveReplaced removed the memory dir")
		}
		if _, err := os.Stat(filepath.Join(mem, "MEMORY.md")); err != nil {
			t.Fatal(err)
		}
		// A second dream dies before it frees its own: Recover does.
		txn2, err := Begin(state, mem, "d2")
		if err != nil {
			t.Fatal(err)
		}
		edit(t, txn2.Dir(), map[string]string{"user.md": "---\nname: user\n---\nThe user likes Go and Rust.\n"})
		res2, err := txn2.CommitWith(CommitOptions{KeepReplaced: true})
		if err != nil || res2.Replaced == "" {
			t.Fatalf("second commit: %q, %v", res2.Replaced, err)
		}
		if err := RemoveReplaced(res.Replaced); err != nil {
			t.Fatal(err)
		}
		rec, err := Recover(state, mem)
		if err != nil || len(rec.Discarded)+len(rec.RolledForward) != 0 {
			t.Fatalf("Recover = %+v, %v: the kept files are no transaction", rec, err)
		}
		if e := journalEntries(t, state, mem); len(e) != 0 {
			t.Fatalf("journal left %v", e)
		}
	}
}

// A commit abandoned before any rename (every rename failed: here each
// linked temporary file is gone once the first replaced file is kept)
// drops the links it kept: no memory file keeps a second name in the
// state dir. Serial: it replaces the linkat seam.
func TestAbandonedCommitDropsKeptLinks(t *testing.T) {
	_, mem, txn := beginDream(t)
	var once sync.Once
	linkat = func(od int, op string, nd int, np string, fl int) error {
		if _, err := strconv.Atoi(np); err == nil { // a kept replaced file, right before its rename
			once.Do(func() {
				filepath.WalkDir(mem, func(p string, d fs.DirEntry, err error) error {
					if err == nil && strings.HasPrefix(d.Name(), TempPrefix) {
						os.Remove(p)
					}
					return err
				})
			})
		}
		return unix.Linkat(od, op, nd, np, fl)
	}
	_, err := txn.CommitWith(CommitOptions{KeepReplaced: true})
	linkat = unix.Linkat
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("CommitWith = %v, want nothing changed", err)
	}
	if got := readTree(t, mem); !sameTree(got, preTree()) {
		t.Fatalf("memory changed: %s", describe(got))
	}
	for p := range preTree() {
		info, err := os.Lstat(filepath.Join(mem, p))
		if err != nil {
			t.Fatal(err)
		}
		if n := info.Sys().(*syscall.Stat_t).Nlink; n != 1 {
			t.Errorf("%s has %d names after the abandoned commit", p, n)
		}
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(txn.Dir()), replacedName)); !os.IsNotExist(err) {
		t.Fatalf("the kept links stay: %v", err)
	}
}

// What Recover finds named like kept files but is not a dir of them (a
// symlink, to the memory dir even; a plain file) is removed itself, never
// followed, and costs the recovery no error; nor does a state dir whose
// name holds glob characters hide real leftovers.
func TestRecoverRemovesHostileReplacedLeftovers(t *testing.T) {
	state := filepath.Join(t.TempDir(), "st[1]*")
	mem := t.TempDir()
	writeTree(t, mem, preTree())
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	res, err := txn.CommitWith(CommitOptions{KeepReplaced: true})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(txn.Dir()))
	if err := os.Symlink(mem, filepath.Join(root, replacedPrefix+"link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, replacedPrefix+"file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := Recover(state, mem)
	if err != nil || len(rec.Discarded) != 0 {
		t.Fatalf("Recover = %+v, %v", rec, err)
	}
	if got, exp := readTree(t, mem), after(preTree(), dreamEdits()); !sameTree(got, exp) {
		t.Fatalf("memory after Recover: %s, want %s", describe(got), describe(exp))
	}
	if e := journalEntries(t, state, mem); len(e) != 0 {
		t.Fatalf("journal left %v (kept files were in %s)", e, res.Replaced)
	}
}
