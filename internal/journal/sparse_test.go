package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// sparseEdits is what a sparse runner writes: whole files, changed ones
// and new ones, one of them identical to its original (dropped), and no
// deletion (a sparse runner never deletes).
func sparseEdits() map[string]string {
	e := dreamEdits()
	delete(e, "feedback.md")
	e["project_b.md"] = preTree()["project_b.md"] // rewritten unchanged
	return e
}

// settle waits until every file written so far is older than the clock
// margin, as a memory written before a dream is: its stat then proves it
// unchanged without reading it.
func settle() { time.Sleep(clockSlack + 20*time.Millisecond) }

func beginSparse(t *testing.T, state, mem, id string, start func(string) ([]byte, bool, error)) *Txn {
	t.Helper()
	txn, err := BeginWith(state, mem, id, Options{Sparse: true, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if !txn.Sparse() {
		t.Fatal("Sparse() = false")
	}
	return txn
}

func changeKinds(chs []Change) string {
	var out []string
	for _, c := range chs {
		out = append(out, c.Kind+" "+c.Path)
	}
	return strings.Join(out, ", ")
}

// Begin of a sparse staging copies, links and records no memory file: the
// staging is empty and the record lists no base.
func TestSparseBeginStagesNothing(t *testing.T) {
	state, mem := setup(t)
	txn := beginSparse(t, state, mem, "s1", nil)
	if got := readTree(t, txn.Dir()); len(got) != 0 {
		t.Fatalf("sparse staging holds %s", describe(got))
	}
	rec, err := readRecord(filepath.Dir(txn.Dir()))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Sparse || len(rec.Base) != 0 || len(rec.Staged) != 0 {
		t.Fatalf("record = sparse %v, %d base, %d staged", rec.Sparse, len(rec.Base), len(rec.Staged))
	}
	chs, err := txn.Changes()
	if err != nil || len(chs) != 0 {
		t.Fatalf("Changes = %v, %v", chs, err)
	}
	if err := txn.Discard(); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, mem); !sameTree(got, preTree()) {
		t.Fatalf("memory changed: %s", describe(got))
	}
}

// A sparse commit lands exactly the written files that differ; every other
// file stays byte for byte and is never looked at.
func TestSparseCommitLandsOnlyWrittenChanges(t *testing.T) {
	for _, withStart := range []bool{false, true} {
		t.Run(fmt.Sprintf("start=%v", withStart), func(t *testing.T) {
			state, mem := setup(t)
			var start func(string) ([]byte, bool, error)
			if withStart {
				start = baseFrom(preTree())
			} else {
				settle()
			}
			txn := beginSparse(t, state, mem, "s1", start)
			writeTree(t, txn.Dir(), sparseEdits())
			txn.Freeze()
			chs, err := txn.Changes()
			if err != nil {
				t.Fatal(err)
			}
			want := "modified MEMORY.md, added new/deep/n.md, modified project_a.md, added project_c.md, modified topics/x.md, added topics/z.md, modified user.md"
			if got := changeKinds(chs); got != want {
				t.Fatalf("changes = %s\nwant      %s", got, want)
			}
			diff, err := txn.Diff()
			if err != nil || !strings.Contains(diff, "-x two\n+x 2\n") || strings.Contains(diff, "a/project_b.md") {
				t.Fatalf("diff (%v):\n%s", err, diff)
			}
			if _, err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, mem); !sameTree(got, after(preTree(), sparseEdits())) {
				t.Fatalf("memory = %s", describe(got))
			}
			if left := journalEntries(t, state, mem); len(left) != 0 {
				t.Fatalf("journal left %v", left)
			}
		})
	}
}

// A written file whose original was touched right before Begin (inside the
// clock's margin) is proved unchanged only by content: without Start it is
// treated as edited by someone else, and the commit refuses rather than
// overwrite it.
func TestSparseRecentOriginalWithoutStartRefuses(t *testing.T) {
	state, mem := setup(t)
	txn := beginSparse(t, state, mem, "s1", nil)
	writeTree(t, txn.Dir(), map[string]string{"user.md": "---\nname: user\n---\nThe user likes Go.\n"})
	if _, err := txn.Commit(); !errors.Is(err, ErrConflict) {
		t.Fatalf("Commit err = %v, want ErrConflict", err)
	}
	if got := readTree(t, mem); !sameTree(got, preTree()) {
		t.Fatalf("memory changed: %s", describe(got))
	}
}

// Edits by the user during a sparse dream: a file both changed is merged
// when the hunks are apart and parked for review when they overlap; a file
// the user deleted that the dream rewrote is parked, not brought back; a
// file the user created at a path the dream adds is parked; a hand edit of
// a file the dream did not write simply stays.
func TestSparseUserEditsDuringDream(t *testing.T) {
	state, mem := setup(t)
	writeTree(t, mem, map[string]string{"notes.md": "# Notes\n\n## Build\n\n- make all\n\n## Deploy\n\n- push to main\n\n## 测试\n\n- go test ./...\n"})
	pre := readTree(t, mem)
	settle()
	txn := beginSparse(t, state, mem, "s1", baseFrom(pre))
	writeTree(t, txn.Dir(), map[string]string{
		"notes.md":    "# Notes\n\n## Build\n\n- make all (since 2026-11-30)\n\n## Deploy\n\n- push to main\n\n## 测试\n\n- go test ./...\n",
		"topics/x.md": "x one\nx 2\nx three\n",
		"feedback.md": "---\nname: feedback\n---\nprefer small diffs (2026-11-30)\n",
		"fresh.md":    "the dream's\n",
		"user.md":     "---\nname: user\n---\nThe user likes Go.\n",
	})
	edit(t, mem, map[string]string{
		"notes.md":     "# Notes\n\n## Build\n\n- make all\n\n## Deploy\n\n- push to main\n\n## 测试\n\n- go test -race ./...\n",
		"topics/x.md":  "x one\nx two (checked)\nx three\n",
		"feedback.md":  "",
		"fresh.md":     "the user's\n",
		"project_b.md": "---\nname: project_b\n---\nUses make and go.\n",
	})
	res, err := txn.CommitWith(CommitOptions{Base: baseFrom(pre)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Merged, ",") != "notes.md" || strings.Join(res.ForReview, ",") != "feedback.md,fresh.md,topics/x.md" {
		t.Fatalf("result = %+v", res)
	}
	got := readTree(t, mem)
	if !strings.Contains(got["notes.md"], "(since 2026-11-30)") || !strings.Contains(got["notes.md"], "go test -race") {
		t.Errorf("notes.md not merged: %q", got["notes.md"])
	}
	if _, ok := got["feedback.md"]; ok {
		t.Errorf("the user's deletion was undone")
	}
	if got["fresh.md"] != "the user's\n" || got["topics/x.md"] != "x one\nx two (checked)\nx three\n" || got["project_b.md"] != "---\nname: project_b\n---\nUses make and go.\n" {
		t.Errorf("a user's edit was lost: %q %q %q", got["fresh.md"], got["topics/x.md"], got["project_b.md"])
	}
	if got["user.md"] != "---\nname: user\n---\nThe user likes Go.\n" {
		t.Errorf("the dream's own change did not land: %q", got["user.md"])
	}
}

// A sparse dream parked for review records the bases of what it wrote, so
// that `dream apply` in another process lands it, and refuses a file the
// user edited after the park.
func TestSparseParkLoadCommit(t *testing.T) {
	for _, editAfter := range []bool{false, true} {
		t.Run(fmt.Sprintf("edited=%v", editAfter), func(t *testing.T) {
			state, mem := setup(t)
			settle()
			txn := beginSparse(t, state, mem, "s1", nil)
			writeTree(t, txn.Dir(), sparseEdits())
			if err := txn.ParkFor("review requested"); err != nil {
				t.Fatal(err)
			}
			if res, err := Recover(state, mem); err != nil || len(res.Discarded) != 0 {
				t.Fatalf("Recover = %+v, %v", res, err)
			}
			if editAfter {
				edit(t, mem, map[string]string{"user.md": "---\nname: user\n---\nThe user likes Rust now.\n"})
			}
			back, err := Load(state, mem, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if !back.Sparse() || back.ParkReason() != "review requested" {
				t.Fatalf("loaded sparse=%v reason=%q", back.Sparse(), back.ParkReason())
			}
			_, err = back.Commit()
			if editAfter {
				if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "user.md") {
					t.Fatalf("Commit after an edit: %v", err)
				}
				if got := readTree(t, mem)["user.md"]; got != "---\nname: user\n---\nThe user likes Rust now.\n" {
					t.Fatalf("the user's edit was overwritten: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, mem); !sameTree(got, after(preTree(), sparseEdits())) {
				t.Fatalf("memory = %s", describe(got))
			}
		})
	}
}

// Hostile staging: what a sparse runner leaves that is not a memory file
// never lands — a symlink (to a file outside, or to a memory file), dream's
// own names, a write that climbs out of staging with "..", a file under a
// path the memory has as a symlink to elsewhere — while a name that merely
// contains ".." is an ordinary file.
func TestSparseHostileStaging(t *testing.T) {
	state, mem, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, mem, preTree())
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(mem, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	pre := readRegular(t, mem)
	settle()
	txn := beginSparse(t, state, mem, "s1", nil)
	st := txn.Dir()
	for name, target := range map[string]string{"leak.md": secret, "user.md": filepath.Join(mem, "user.md"), "dirlink": outside} {
		if err := os.Symlink(target, filepath.Join(st, name)); err != nil {
			t.Fatal(err)
		}
	}
	writeTree(t, st, map[string]string{
		LockName:                "999",
		".git/config":           "[core]\n",
		TempPrefix + "x":        "temp\n",
		"a..b.md":               "dots in a name\n",
		"topics/../topics/y.md": "y rewritten\n",
	})
	if err := os.WriteFile(filepath.Join(st, "..", "escape.md"), []byte("escape\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	txn.Freeze()
	chs, err := txn.Changes()
	if err != nil {
		t.Fatal(err)
	}
	if got := changeKinds(chs); got != "added a..b.md, modified topics/y.md" {
		t.Fatalf("changes = %s", got)
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	want := after(pre, map[string]string{"a..b.md": "dots in a name\n", "topics/y.md": "y rewritten\n"})
	if got := readRegular(t, mem); !sameTree(got, want) {
		t.Fatalf("memory = %s, want %s", describe(got), describe(want))
	}
	if fi, err := os.Lstat(filepath.Join(mem, "user.md")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("user.md is no longer a plain file: %v %v", fi, err)
	}

	// A file under the memory's symlink to elsewhere refuses the commit
	// before anything is written there.
	txn = beginSparse(t, state, mem, "s2", nil)
	writeTree(t, txn.Dir(), map[string]string{"elsewhere/x.md": "through the link\n", "elsewhere/secret.md": "overwritten\n"})
	if _, err := txn.Commit(); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit under a symlinked dir: err = %v, want ErrConflict", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret\n" {
		t.Fatalf("the commit wrote through the symlink: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("the commit wrote outside the memory dir: %v", ents)
	}
	if err := txn.Discard(); err != nil {
		t.Fatal(err)
	}
}

// A staged file left half-written is, to the journal, a file like any
// other: it is landed only by a commit, whole (temp file and rename), never
// by the runner; discarding the transaction leaves the original intact.
func TestSparseHalfWrittenDiscarded(t *testing.T) {
	state, mem := setup(t)
	settle()
	txn := beginSparse(t, state, mem, "s1", nil)
	full := preTree()["MEMORY.md"]
	writeTree(t, txn.Dir(), map[string]string{"MEMORY.md": full[:len(full)/2]})
	chs, err := txn.Changes()
	if err != nil || changeKinds(chs) != "modified MEMORY.md" || chs[0].Removed == 0 {
		t.Fatalf("changes = %+v, %v", chs, err)
	}
	if err := txn.Discard(); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, mem); !sameTree(got, preTree()) {
		t.Fatalf("memory changed: %s", describe(got))
	}
}

// A runner that writes into the memory dir itself, not staging, bypasses
// the journal; the journal never records that write as the dream's, and a
// file it also staged differently is treated as edited by someone else:
// merged or parked, never overwritten.
func TestSparseRunnerWritingIntoBase(t *testing.T) {
	state, mem := setup(t)
	pre := readTree(t, mem)
	settle()
	txn := beginSparse(t, state, mem, "s1", baseFrom(pre))
	writeTree(t, mem, map[string]string{"topics/x.md": "x one\nx TWO\nx three\n", "rogue.md": "rogue\n"})
	writeTree(t, txn.Dir(), map[string]string{"topics/x.md": "x one\nx 2\nx three\n", "user.md": "---\nname: user\n---\nThe user likes Go.\n"})
	res, err := txn.CommitWith(CommitOptions{Base: baseFrom(pre)})
	if err != nil {
		t.Fatal(err)
	}
	var applied []string
	for _, c := range res.Applied {
		applied = append(applied, c.Path)
	}
	if !slices.Equal(applied, []string{"user.md"}) || !slices.Equal(res.ForReview, []string{"topics/x.md"}) {
		t.Fatalf("result = %+v", res)
	}
	if got := readTree(t, mem)["topics/x.md"]; got != "x one\nx TWO\nx three\n" {
		t.Fatalf("topics/x.md = %q", got)
	}
}

// readRegular is readTree over regular files only: symlinks are left out.
func readRegular(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A file edited around the start (its ctime too recent to vouch for it)
// whose content is not Start's gets Start's content as its base: the
// commit finds it edited while it differs, and the parked dream lands once
// the file is back to what the dream began from (with no base at all it
// could never be applied).
func TestSparseRecentEditBaseIsStart(t *testing.T) {
	state, mem := setup(t)
	pre := readTree(t, mem)
	settle()
	rust := "---\nname: user\n---\nThe user likes Rust.\n"
	edit(t, mem, map[string]string{"user.md": rust}) // just before Begin: too recent for its ctime to vouch
	txn := beginSparse(t, state, mem, "s1", baseFrom(pre))
	dreamt := "---\nname: user\n---\nThe user likes Go (since 2026-11-30).\n"
	writeTree(t, txn.Dir(), map[string]string{"user.md": dreamt})
	if err := txn.ParkFor("review requested"); err != nil {
		t.Fatal(err)
	}
	back, err := Load(state, mem, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.Commit(); !errors.Is(err, ErrConflict) {
		t.Fatalf("Commit over the user's edit: %v, want ErrConflict", err)
	}
	if got := readTree(t, mem)["user.md"]; got != rust {
		t.Fatalf("the user's edit was overwritten: %q", got)
	}
	edit(t, mem, map[string]string{"user.md": pre["user.md"]})
	back, err = Load(state, mem, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.Commit(); err != nil {
		t.Fatalf("Commit once the file is Start's again: %v", err)
	}
	if got := readTree(t, mem)["user.md"]; got != dreamt {
		t.Fatalf("user.md = %q, want the dream's", got)
	}
}

// The ctime is trusted only on file systems whose ctime is the local
// kernel's; the test's temp dir is on one of them on any usual Linux box.
func TestKernelCtimeOfTempDir(t *testing.T) {
	if !kernelCtime(t.TempDir()) && runtime.GOOS == "linux" {
		t.Skip("the temp dir is on a file system outside the allowlist: sparse stagings there compare by content")
	}
	if kernelCtime(filepath.Join(t.TempDir(), "missing")) {
		t.Fatal("kernelCtime of a missing path = true")
	}
}

// ChangesWithOriginals hands over, from the one scan, the start version of
// every modified file whose original is provably unchanged since Begin,
// and nothing for a file edited during the dream (its start version is
// elsewhere) or added; the line counts are those of the two sides; a second
// look at a frozen staging reads nothing again and visits nothing.
func TestSparseChangesWithOriginals(t *testing.T) {
	state, mem := setup(t)
	settle()
	txn := beginSparse(t, state, mem, "s1", nil)
	writeTree(t, txn.Dir(), sparseEdits())
	edit(t, mem, map[string]string{"topics/x.md": "x one\nx two (user)\nx three\n"}) // during the dream
	txn.Freeze()
	seen := map[string]string{}
	chs, visited, err := txn.ChangesWithOriginals(func(rel string, data []byte) { seen[rel] = string(data) })
	if err != nil {
		t.Fatal(err)
	}
	if got := changeKinds(chs); got != "modified MEMORY.md, added new/deep/n.md, modified project_a.md, added project_c.md, modified topics/x.md, added topics/z.md, modified user.md" {
		t.Fatalf("changes = %s", got)
	}
	pre := preTree()
	want := map[string]string{"MEMORY.md": pre["MEMORY.md"], "project_a.md": pre["project_a.md"], "user.md": pre["user.md"]}
	if !sameTree(seen, want) || len(visited) != len(want) {
		t.Fatalf("visited %s (%v), want %s", describe(seen), visited, describe(want))
	}
	for _, c := range chs {
		if c.Path == "user.md" && (c.Added != 0 || c.Removed != 1) || c.Path == "new/deep/n.md" && (c.Added != 1 || c.Removed != 0) {
			t.Errorf("%s: +%d -%d", c.Path, c.Added, c.Removed)
		}
	}
	seen = map[string]string{}
	if _, visited, err := txn.ChangesWithOriginals(func(rel string, data []byte) { seen[rel] = string(data) }); err != nil || len(visited) != 0 || len(seen) != 0 {
		t.Fatalf("second look visited %v (%v)", visited, err)
	}
}

// A memory path that is a symlink when the dream writes it is never read
// through: the change is listed with no line counts (the outside file,
// followed, would give some), and its original is not handed over.
func TestSparseSymlinkOriginalNotFollowed(t *testing.T) {
	state, mem := setup(t)
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(mem, "user.md"))
	if err := os.Symlink(outside, filepath.Join(mem, "user.md")); err != nil {
		t.Fatal(err)
	}
	settle()
	txn := beginSparse(t, state, mem, "s1", nil)
	writeTree(t, txn.Dir(), map[string]string{"user.md": "one\ntwo\nthree\nfour\n"})
	txn.Freeze()
	chs, visited, err := txn.ChangesWithOriginals(func(string, []byte) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(chs) != 1 || chs[0].Kind != Modified || chs[0].Added != 0 || chs[0].Removed != 0 || len(visited) != 0 {
		t.Fatalf("changes %+v, visited %v", chs, visited)
	}
	if _, existed, intact, _ := txn.ReadOriginal("user.md"); !existed || intact {
		t.Fatalf("ReadOriginal through a symlink: existed %v intact %v", existed, intact)
	}
}

// A sparse scan reads many files on several goroutines; the base hashes it
// learns on the way, opaque originals' included (over OpaqueSize: hashed,
// never read whole), reach the record only in its serial merge. Run with
// -race, this fails if any worker writes the record.
func TestSparseScanOfManyOpaqueOriginals(t *testing.T) {
	state, mem := t.TempDir(), t.TempDir()
	const big, small = 6, 70
	for i := range big {
		p := filepath.Join(mem, fmt.Sprintf("logs/big_%d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		// Sparse: over OpaqueSize without writing it.
		if _, err := f.WriteString("# 日志\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(OpaqueSize + 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	old := map[string]string{}
	for i := range small {
		old[fmt.Sprintf("topic_%02d.md", i)] = fmt.Sprintf("# Topic %d\n\n1. Run `go test ./...`\n2. 然后发布\n", i)
	}
	writeTree(t, mem, old)
	settle()
	txn := beginSparse(t, state, mem, "d1", nil)
	edits := map[string]string{}
	for rel, body := range old {
		edits[rel] = body + "3. Tag the release.\n"
	}
	for i := range big {
		edits[fmt.Sprintf("logs/big_%d.md", i)] = "# 日志\n\n- trimmed by hand\n"
	}
	writeTree(t, txn.Dir(), edits)
	chs, err := txn.Changes()
	if err != nil {
		t.Fatal(err)
	}
	if len(chs) != big+small {
		t.Fatalf("%d changes, want %d: %s", len(chs), big+small, changeKinds(chs))
	}
	for i := range big {
		rel := fmt.Sprintf("logs/big_%d.md", i)
		if b := txn.rec.Base[rel]; b.SHA256 == "" {
			t.Errorf("%s: the base's hash was not recorded (%+v)", rel, b)
		}
	}
}
