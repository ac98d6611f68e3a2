package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Issue 9, class 6: the commit under tool-like input. Each run builds a
// memory dir (the usual memories, an odd-named file, a symlink that leaves
// the memory dir), stages it, lets the "agent" write, remove and link
// fuzzed names inside the staging dir as the sandbox's os.Root would let
// it, and commits. Whatever the names — newlines, bytes that are not UTF-8,
// "..", names too long for the file system — the commit must change exactly
// the staged paths, nothing outside the memory dir, leave no temporary or
// half-written file, report exactly those changes, and leave nothing for
// Recover.
//
// ops selects what the agent does, bit by bit:
//
//	1  write data at name
//	2  remove other
//	4  write (size mod 4096) lines at other (0-byte up to ~250 KB)
//	8  plant a symlink name+".lnk" to a file outside the memory dir
//	16 stage by hard link (Options.LinkUnchanged)
//	32 replace the staged copy of the memory dir's outward symlink with a
//	   real directory and write name's base inside it
func FuzzCommit(f *testing.F) {
	f.Add("notes.md", []byte("# Notes\n1. step\n"), "user.md", uint8(1|2), uint16(0))
	f.Add("a\nb.md", []byte("line\n"), "topics/x.md", uint8(1|4), uint16(3))
	f.Add("\xff\xfe名前.md", []byte("中文记忆\n> 引用\n"), "weird\xc3(.md", uint8(1|2|16), uint16(0))
	f.Add("../x.md", []byte("escape"), "../../etc/y.md", uint8(1|4), uint16(1))
	f.Add(strings.Repeat("n", 300)+".md", []byte("long"), strings.Repeat("d/", 60)+"deep.md", uint8(1|4), uint16(2))
	f.Add("empty.md", []byte{}, "project_a.md", uint8(1|4), uint16(0))
	f.Add("big.bin", bytes.Repeat([]byte{0, 1, 2, 0xff}, 4096), "project_b.md", uint8(1|4|16), uint16(65535))
	f.Add("MEMORY.md", []byte("# Memory\n"), "topics/y.md", uint8(1|2|8), uint16(0))
	f.Add("gone.md", []byte("via the link\n"), "escape/planted.md", uint8(1|4|32), uint16(1))
	f.Add(".dream-tmp-1-x.md", []byte("temp-like"), ".git/HEAD", uint8(1|4), uint16(1))
	f.Add(".consolidate-lock", []byte("999"), "sub/.git/x", uint8(1|2|4), uint16(1))
	f.Fuzz(func(t *testing.T, name string, data []byte, other string, ops uint8, size uint16) {
		top := t.TempDir()
		mem := filepath.Join(top, "mem")
		state := filepath.Join(top, "state")
		outside := filepath.Join(top, "outside")
		writeTree(t, mem, preTree())
		writeTree(t, outside, map[string]string{"secret.md": "outside the memory dir\n"})
		if err := os.Symlink(outside, filepath.Join(mem, "escape")); err != nil {
			t.Fatal(err)
		}
		// The odd name may also exist before the dream, so it can be
		// modified or removed; where the file system refuses it, it doesn't.
		if r, err := os.OpenRoot(mem); err == nil {
			rootWrite(r, other, []byte("original of an odd name\n"))
			r.Close()
		}
		memBefore := snapshot(t, mem)
		outBefore := snapshot(t, outside)

		txn, err := BeginWith(state, mem, "fz", Options{LinkUnchanged: ops&16 != 0})
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
		if ops&2 != 0 {
			if info, err := stage.Lstat(other); err == nil && info.Mode().IsRegular() {
				stage.Remove(other)
			}
		}
		if ops&4 != 0 {
			rootWrite(stage, other, bytes.Repeat([]byte("0123456789 ẞ abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOP\n"), int(size)%4096))
		}
		if ops&8 != 0 {
			stage.Symlink(filepath.Join(outside, "secret.md"), name+".lnk")
		}
		wantConflict := false
		if ops&32 != 0 && stage.Remove("escape") == nil && stage.Mkdir("escape", 0o755) == nil {
			wantConflict = rootWrite(stage, "escape/"+filepath.Base(name), data)
		}
		stage.Close()

		staged := snapshot(t, txn.Dir())
		want := expectedChanges(memBefore, staged)
		got, err := txn.Changes()
		if err != nil {
			t.Fatalf("Changes: %v", err)
		}
		if g, w := describeChanges(got), describeChanges(want); g != w {
			t.Fatalf("Changes lists\n%s\nwant\n%s", g, w)
		}

		t.Logf("changes %s; conflict expected %v", describeChanges(want), wantConflict)
		applied, err := txn.Commit()
		memAfter := commitOutcome{top: top, mem: mem, outside: outside, memBefore: memBefore, outBefore: outBefore, staged: staged, want: want,
			conflict: wantConflict, why: "commit through a directory that is a symlink in the memory dir"}.check(t, txn, applied, err)
		if _, err := txn.Changes(); !errors.Is(err, ErrClosed) {
			t.Fatalf("Changes after the commit: err = %v, want ErrClosed", err)
		}
		// A fresh dream over the committed memory sees nothing to do.
		again, err := Begin(state, mem, "fz2")
		if err != nil {
			t.Fatal(err)
		}
		if chs, err := again.Changes(); err != nil || len(chs) != 0 {
			t.Fatalf("a fresh transaction after the commit has changes %v, %v", chs, err)
		}
		if err := again.Discard(); err != nil {
			t.Fatal(err)
		}
		if HasPending(state, mem) {
			t.Fatal("the commit left a pending transaction")
		}
		rec, err := Recover(state, mem)
		if err != nil || len(rec.RolledForward)+len(rec.Discarded)+len(rec.Skipped) != 0 {
			t.Fatalf("Recover after the commit did something: %+v, %v", rec, err)
		}
		if got := snapshot(t, mem); !sameTree(got, memAfter) {
			t.Fatalf("Recover after the commit changed memory: %s", describe(got))
		}
	})
}

// rootWrite writes data at a slash or OS path inside r, creating parents,
// the way the sandbox's tools do: a new file renamed over the old, never an
// in-place write (which, in a linked staging, would write through the link
// into the memory itself). It reports whether the write happened.
// Names the root or the file system refuses (escapes, NUL, too long) are
// simply not written, as the sandbox would refuse the tool call.
func rootWrite(r *os.Root, name string, data []byte) bool {
	if name == "" || strings.ContainsRune(name, 0) {
		return false
	}
	if dir := filepath.Dir(name); dir != "." {
		if r.MkdirAll(dir, 0o755) != nil {
			return false
		}
	}
	if info, err := r.Lstat(name); err == nil && !info.Mode().IsRegular() {
		return false
	}
	tmp := filepath.Join(filepath.Dir(name), ".fuzz-write")
	if r.WriteFile(tmp, data, 0o644) != nil {
		r.Remove(tmp)
		return false
	}
	if r.Rename(tmp, name) != nil {
		r.Remove(tmp)
		return false
	}
	return true
}

// snapshot maps every entry under dir that is not a directory to its
// content, a symlink to "-> target", so a link written, removed or
// retargeted shows.
// commitOutcome is what a fuzzed commit must have done, whatever the
// staging mode: no temporary file left and nothing outside the memory dir
// touched; a refused commit (ErrConflict, with why naming the case) changed
// nothing and is discarded; an accepted one applied exactly want, so that
// the memory is its start with the staged files put in and the deleted
// ones gone.
type commitOutcome struct {
	top, mem, outside    string
	memBefore, outBefore map[string]string
	staged               map[string]string
	want                 []Change
	conflict             bool
	why                  string
}

// check returns the memory as the commit left it.
func (o commitOutcome) check(t *testing.T, txn *Txn, applied []Change, err error) (memAfter map[string]string) {
	t.Helper()
	memAfter = snapshot(t, o.mem)
	if tmp := tempFiles(memAfter); len(tmp) > 0 {
		t.Fatalf("commit left temporary files %q", tmp)
	}
	if out := snapshot(t, o.outside); !sameTree(out, o.outBefore) {
		t.Fatalf("commit changed the directory outside the memory dir: %s", describe(out))
	}
	if entries := dirNames(t, o.top); entries != "mem,outside,state" {
		t.Fatalf("commit created files beside the memory dir: %s", entries)
	}
	if o.conflict {
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("%s: err = %v, want ErrConflict", o.why, err)
		}
		if !sameTree(memAfter, o.memBefore) {
			t.Fatalf("a refused commit changed memory: %s", describe(memAfter))
		}
		if err := txn.Discard(); err != nil {
			t.Fatal(err)
		}
		return memAfter
	}
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if g, w := describeChanges(applied), describeChanges(o.want); g != w {
		t.Fatalf("Commit applied\n%s\nwant\n%s", g, w)
	}
	wantMem := maps.Clone(o.memBefore)
	for _, c := range o.want {
		if c.Kind == Deleted {
			delete(wantMem, c.Path)
		} else {
			wantMem[c.Path] = o.staged[c.Path]
		}
	}
	if !sameTree(memAfter, wantMem) {
		t.Fatalf("memory after commit differs from the staged changes:\ngot  %s\nwant %s", describe(memAfter), describe(wantMem))
	}
	return memAfter
}

func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		}
		if !d.Type().IsRegular() {
			out[rel] = "special " + d.Type().String()
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// expectedChanges is the model of Changes: the regular memory files
// (nothing under an ignored name, no symlink) that differ between the
// memory before the dream and the staging dir.
func expectedChanges(before, staged map[string]string) []Change {
	memory := func(tree map[string]string) map[string]string {
		out := map[string]string{}
		for p, v := range tree {
			if strings.HasPrefix(v, "-> ") || strings.HasPrefix(v, "special ") {
				continue
			}
			ignored := false
			for _, el := range strings.Split(p, "/") {
				ignored = ignored || Ignored(el)
			}
			if !ignored {
				out[p] = v
			}
		}
		return out
	}
	b, s := memory(before), memory(staged)
	var out []Change
	for p, v := range s {
		old, ok := b[p]
		switch {
		case !ok:
			out = append(out, Change{Path: p, Kind: Added})
		case old != v:
			out = append(out, Change{Path: p, Kind: Modified})
		}
	}
	for p := range b {
		if _, ok := s[p]; !ok {
			out = append(out, Change{Path: p, Kind: Deleted})
		}
	}
	return out
}

func describeChanges(chs []Change) string {
	lines := make([]string, len(chs))
	for i, c := range chs {
		lines[i] = fmt.Sprintf("%s %q", c.Kind, c.Path)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func dirNames(t testing.TB, dir string) string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(des))
	for i, d := range des {
		names[i] = d.Name()
	}
	return strings.Join(names, ",")
}
