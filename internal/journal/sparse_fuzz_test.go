package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSparseCommit is FuzzCommit for a sparse staging: the "runner" starts
// from an empty staging and writes fuzzed names (as the offline engine's
// os.Root would let it), plants a symlink to a file outside, or writes under
// a path the memory has as a symlink to elsewhere. Whatever the names, the
// changes are exactly the staged regular files that differ from the memory
// (never a deletion), the commit lands exactly those, or refuses whole when
// a path crosses a symlink, a file or a directory of the memory; nothing
// outside the memory dir changes, no temporary file stays, and nothing is
// left for Recover.
//
// ops: 1 write data at name; 4 write (size mod 4096) lines at other; 8 plant
// name+".lnk" -> a file outside; 32 write name's base under "escape/" (the
// memory's symlink to elsewhere).
func FuzzSparseCommit(f *testing.F) {
	f.Add("notes.md", []byte("# Notes\n1. step\n"), "user.md", uint8(1|4), uint16(2))
	f.Add("\xff\xfe名前.md", []byte("中文记忆\n> 引用\n"), "weird\xc3(.md", uint8(1|4), uint16(0))
	f.Add("../x.md", []byte("escape"), "../../etc/y.md", uint8(1|4), uint16(1))
	f.Add("topics", []byte("a file where memory has a dir\n"), "user.md/x.md", uint8(1|4), uint16(1))
	f.Add("MEMORY.md", []byte(preTree()["MEMORY.md"]), "project_b.md", uint8(1|4|8), uint16(0))
	f.Add("secret.md", []byte("overwrite?\n"), "escape", uint8(1|4|32), uint16(1))
	f.Add(".consolidate-lock", []byte("999"), ".git/HEAD", uint8(1|4), uint16(1))
	f.Fuzz(func(t *testing.T, name string, data []byte, other string, ops uint8, size uint16) {
		top := t.TempDir()
		mem, state, outside := filepath.Join(top, "mem"), filepath.Join(top, "state"), filepath.Join(top, "outside")
		writeTree(t, mem, preTree())
		writeTree(t, outside, map[string]string{"secret.md": "outside the memory dir\n"})
		if err := os.Symlink(outside, filepath.Join(mem, "escape")); err != nil {
			t.Fatal(err)
		}
		memBefore, outBefore := snapshot(t, mem), snapshot(t, outside)
		// The memory was just written: its start versions are proved by
		// content, as dream proves them from the audit history.
		start := func(rel string) ([]byte, bool, error) {
			v, ok := memBefore[rel]
			if !ok || strings.HasPrefix(v, "-> ") {
				return nil, false, nil
			}
			return []byte(v), true, nil
		}
		txn, err := BeginWith(state, mem, "fz", Options{Sparse: true, Start: start})
		if err != nil {
			t.Fatal(err)
		}
		stage, err := os.OpenRoot(txn.Dir())
		if err != nil {
			t.Fatal(err)
		}
		if ops&1 != 0 {
			rootWrite(stage, name, data)
		}
		if ops&4 != 0 {
			rootWrite(stage, other, bytes.Repeat([]byte("0123456789 ẞ abcdefghijklmnopqrstuvwxyz\n"), int(size)%4096))
		}
		if ops&8 != 0 {
			stage.Symlink(filepath.Join(outside, "secret.md"), name+".lnk")
		}
		if ops&32 != 0 {
			rootWrite(stage, "escape/"+filepath.Base(name), data)
		}
		stage.Close()

		// The model: each staged regular memory file is added, modified or
		// dropped; one that crosses or replaces something that is not a
		// regular file of the memory (a symlink, a dir, a file as a parent)
		// makes the commit refuse.
		staged := snapshot(t, txn.Dir())
		var want []Change
		conflict := false
		for p, v := range staged {
			if strings.HasPrefix(v, "-> ") || strings.HasPrefix(v, "special ") || validRel(p) != nil {
				continue
			}
			els := strings.Split(p, "/")
			crosses := false
			for i := 1; i < len(els); i++ {
				if _, ok := memBefore[strings.Join(els[:i], "/")]; ok {
					crosses = true // a parent is a file or a symlink in the memory
				}
			}
			for q := range memBefore {
				if strings.HasPrefix(q, p+"/") {
					crosses = true // the memory has a directory there
				}
			}
			old, ok := memBefore[p]
			switch {
			case crosses || ok && strings.HasPrefix(old, "-> "):
				conflict = true
			case !ok:
				want = append(want, Change{Path: p, Kind: Added})
			case old != v:
				want = append(want, Change{Path: p, Kind: Modified})
			}
		}
		got, err := txn.Changes()
		if err != nil {
			t.Fatalf("Changes: %v", err)
		}
		if !conflict {
			if g, w := describeChanges(got), describeChanges(want); g != w {
				t.Fatalf("Changes lists\n%s\nwant\n%s", g, w)
			}
		}
		for _, c := range got {
			if c.Kind == Deleted {
				t.Fatalf("a sparse staging deleted %q", c.Path)
			}
		}
		applied, err := txn.Commit()
		commitOutcome{top: top, mem: mem, outside: outside, memBefore: memBefore, outBefore: outBefore, staged: staged, want: want,
			conflict: conflict, why: "a staged path across the memory's symlink, file or dir"}.check(t, txn, applied, err)
		if HasPending(state, mem) {
			t.Fatal("the commit left a pending transaction")
		}
		if rec, err := Recover(state, mem); err != nil || len(rec.RolledForward)+len(rec.Discarded)+len(rec.Skipped) != 0 {
			t.Fatalf("Recover after the commit did something: %+v, %v", rec, err)
		}
	})
}
