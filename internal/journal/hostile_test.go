package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 9, class 11: a hand edit to a file the dream did not change never
// fails the dream; both land. (On the original code any edit to any memory
// file during the dream refused the whole commit.)
func TestCommitLandsBesideUnrelatedHandEdits(t *testing.T) {
	for _, link := range []bool{false, true} {
		t.Run(fmt.Sprintf("link=%v", link), func(t *testing.T) {
			state, mem := setup(t)
			txn, err := BeginWith(state, mem, "d1", Options{LinkUnchanged: link})
			if err != nil {
				t.Fatal(err)
			}
			replace(t, txn.Dir(), dreamEdits())
			hand := map[string]string{"project_b.md": "---\nname: project_b\n---\nUses make and just.\n", "topics/y.md": ""}
			edit(t, mem, hand)
			chs, err := txn.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if len(chs) != len(dreamEdits()) {
				t.Errorf("applied %d changes, want %d", len(chs), len(dreamEdits()))
			}
			want := after(after(preTree(), dreamEdits()), hand)
			if got := readTree(t, mem); !sameTree(got, want) {
				t.Fatalf("memory = %s\nwant %s", describe(got), describe(want))
			}
		})
	}
}

// baseFrom serves the content before the dream, as the audit history does.
func baseFrom(tree map[string]string) func(string) ([]byte, bool, error) {
	return func(p string) ([]byte, bool, error) {
		b, ok := tree[p]
		return []byte(b), ok, nil
	}
}

// Issue 9, class 11: a file both changed is merged when the hunks do not
// overlap; when they do, the user's version stays and the dream's change is
// parked for review, from which it can still be applied. Neither side is
// lost. (The original code refused the whole dream.)
func TestCommitMergesOrParksBothChanged(t *testing.T) {
	state, mem := setup(t)
	writeTree(t, mem, map[string]string{"notes.md": "# Notes\n\n## Build\n\n- make all\n\n## Deploy\n\n- push to main\n\n## 测试\n\n- go test ./...\n"})
	pre := readTree(t, mem)
	txn, err := BeginWith(state, mem, "d1", Options{LinkUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	replace(t, txn.Dir(), map[string]string{
		"notes.md":    "# Notes\n\n## Build\n\n- make all (since 2026-11-30)\n\n## Deploy\n\n- push to main\n\n## 测试\n\n- go test ./...\n",
		"user.md":     "---\nname: user\n---\nThe user likes Go.\n",
		"topics/x.md": "x one\nx 2\nx three\n",
	})
	// Meanwhile the user edits the other end of notes.md, and the very
	// line of topics/x.md the dream rewrote.
	edit(t, mem, map[string]string{
		"notes.md":    "# Notes\n\n## Build\n\n- make all\n\n## Deploy\n\n- push to main\n\n## 测试\n\n- go test -race ./...\n",
		"topics/x.md": "x one\nx two (checked)\nx three\n",
	})
	res, err := txn.CommitWith(CommitOptions{Base: baseFrom(pre)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Merged, ",") != "notes.md" || strings.Join(res.ForReview, ",") != "topics/x.md" || res.ReviewID != "d1-review" {
		t.Fatalf("result = %+v", res)
	}
	got := readTree(t, mem)
	if want := "# Notes\n\n## Build\n\n- make all (since 2026-11-30)\n\n## Deploy\n\n- push to main\n\n## 测试\n\n- go test -race ./...\n"; got["notes.md"] != want {
		t.Errorf("merged notes.md = %q", got["notes.md"])
	}
	if got["topics/x.md"] != "x one\nx two (checked)\nx three\n" {
		t.Errorf("the user's overlapping edit was not kept: %q", got["topics/x.md"])
	}
	if got["user.md"] != "---\nname: user\n---\nThe user likes Go.\n" {
		t.Errorf("the dream's other change did not land: %q", got["user.md"])
	}
	review, err := Load(state, mem, res.ReviewID)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := review.Diff()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff, "-x two (checked)\n+x 2\n") || strings.Contains(diff, "notes.md") {
		t.Errorf("review diff:\n%s", diff)
	}
	if _, err := review.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, mem)["topics/x.md"]; got != "x one\nx 2\nx three\n" {
		t.Errorf("applying the review gave %q", got)
	}
}

// Issue 9, class 8: with the disk full at the second file, the commit
// changes nothing (no file of three lands, no temp file stays) and leaves
// nothing to roll forward. (The original code renamed each file as soon as
// it was written: one file of three landed.)
func TestCommitDiskFullChangesNothing(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	n := 0
	writeTempData = func(w io.Writer, r io.Reader) (int64, error) {
		n++
		if n == 2 {
			return 0, &os.PathError{Op: "write", Path: "tmp", Err: syscall.ENOSPC}
		}
		return io.Copy(w, r)
	}
	defer func() { writeTempData = copyStream }()
	before := readTree(t, mem)
	_, err = txn.Commit()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Commit = %v, want ENOSPC", err)
	}
	if got := readTree(t, mem); !sameTree(got, before) {
		t.Fatalf("a commit that ran out of space changed memory: %s (temps %v)", describe(got), tempFiles(got))
	}
	if HasPending(state, mem) {
		if _, err := Recover(state, mem); err != nil {
			t.Fatal(err)
		}
	}
	if got := readTree(t, mem); !sameTree(got, before) {
		t.Fatalf("recovery rolled a failed commit forward: %s", describe(got))
	}
}

// Issue 9, class 13: a file over OpaqueSize is staged by reference (the
// same inode, nothing copied), not read when unchanged, and diffed as
// binary when the dream replaced it; the commit streams it.
func TestOpaqueFileStagedByReference(t *testing.T) {
	state, mem := setup(t)
	big := filepath.Join(mem, "pasted.log")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte("2026-11-30T03:00:00Z INFO build step compiled a package\n")
	for written := 0; written < OpaqueSize+len(line); written += len(line) {
		f.Write(line)
	}
	f.Close()
	txn, err := BeginWith(state, mem, "d1", Options{LinkUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(big)
	b, _ := os.Stat(filepath.Join(txn.Dir(), "pasted.log"))
	if !os.SameFile(a, b) {
		t.Error("the large file was copied into staging")
	}
	chs, err := txn.Changes()
	if err != nil || len(chs) != 0 {
		t.Fatalf("Changes = %v, %v", chs, err)
	}
	replace(t, txn.Dir(), map[string]string{"pasted.log": "trimmed\n"})
	diff, err := txn.Diff()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff, "Binary files a/pasted.log and b/pasted.log differ") {
		t.Errorf("diff of an opaque file:\n%s", diff)
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
}

// replace writes files the way dream's writers do (temp file and rename),
// never in place: the contract of a linked staging.
func replace(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if body == "" {
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		tmp := full + ".tmp-test"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, full); err != nil {
			t.Fatal(err)
		}
	}
}

// A commit of many files takes the batched path (one file-system flush
// instead of an fsync per file) and lands every file.
func TestCommitManyFilesBatched(t *testing.T) {
	state, mem := setup(t)
	edits := map[string]string{}
	for i := range 3 * batchSync {
		edits[fmt.Sprintf("many/t%03d.md", i)] = fmt.Sprintf("fact %d\n", i)
	}
	txn, err := BeginWith(state, mem, "d1", Options{LinkUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	replace(t, txn.Dir(), edits)
	chs, err := txn.Commit()
	if err != nil || len(chs) != len(edits) {
		t.Fatalf("Commit = %d changes, %v", len(chs), err)
	}
	if got := readTree(t, mem); !sameTree(got, after(preTree(), edits)) {
		t.Fatalf("memory = %s", describe(got))
	}
}
