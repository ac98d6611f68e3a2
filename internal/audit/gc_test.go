package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// countObjects is `git count-objects -v` as numbers.
func countObjects(t *testing.T, h *History, mem string) map[string]int {
	t.Helper()
	res := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(plainGit(t, mem, "--git-dir="+h.GitDir(), "count-objects", "-v")), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("count-objects: %q", l)
		}
		res[k] = n
	}
	return res
}

// A record with more files than the message lists still has every file,
// with git's own counts, in its entry.
func TestWideRecordCapsTheMessage(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	const n = maxMsgFiles + 100
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("topics/t%04d.md", i)] = fmt.Sprintf("# Topic %d\n\n- fact %d\n- 事实 %d\n", i, i, i)
	}
	writeTree(t, mem, files)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	changed := maxMsgFiles + 37
	var paths []string
	for i := range changed {
		p := fmt.Sprintf("topics/t%04d.md", i)
		files[p] += "- dated: 2026-12-01\n"
		if i%50 == 0 {
			files[p] = "# rewritten\n"
		}
		paths = append(paths, p)
	}
	writeTree(t, mem, files)
	m := meta("wide")
	m.Paths = paths
	sha, err := h.RecordDream(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	msg := plainGit(t, mem, "--git-dir="+h.GitDir(), "log", "-1", "--format=%B", sha)
	if want := fmt.Sprintf("dream wide: %d files\n", changed); !strings.HasPrefix(msg, want) {
		t.Fatalf("subject %q, want %q", strings.SplitN(msg, "\n", 2)[0], want)
	}
	if want := fmt.Sprintf("… and %d more files (the commit holds every change)\n", changed-maxMsgFiles); !strings.Contains(msg, want) {
		t.Fatalf("message lacks %q", want)
	}
	if got := strings.Count(msg, "\nmodified "); got != maxMsgFiles {
		t.Fatalf("message lists %d files, want %d", got, maxMsgFiles)
	}
	e, err := h.Show(ctx, "wide")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Files) != changed {
		t.Fatalf("entry has %d files, want %d", len(e.Files), changed)
	}
	numstat := plainGit(t, mem, "--git-dir="+h.GitDir(), "diff-tree", "--numstat", "--no-renames", sha+"^", sha)
	for i, l := range strings.Split(strings.TrimSpace(numstat), "\n") {
		want := fmt.Sprintf("%d\t%d\t%s", e.Files[i].Added, e.Files[i].Removed, e.Files[i].Path)
		if l != want {
			t.Fatalf("file %d: git says %q, the entry %q", i, l, want)
		}
	}
	if got, err := h.FileAt(ctx, sha, "topics/t0001.md"); err != nil || string(got) != files["topics/t0001.md"] {
		t.Fatalf("FileAt = %q, %v", got, err)
	}
}

// A file whose stat changed but whose bytes did not is hashed again and
// adds nothing: no object, no entry; nor do many (past refreshAt, git
// refreshes their stat first), while a same-size edit among them, its
// mtime put back, is still recorded.
func TestTouchedFilesAddNothing(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	files := map[string]string{}
	for i := range refreshAt + 50 {
		files[fmt.Sprintf("many/m%03d.md", i)] = fmt.Sprintf("- memory %03d\n", i)
	}
	writeTree(t, mem, files)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, refreshAt + 50} {
		before := countObjects(t, h, mem)
		later := time.Now().Add(time.Duration(n) * time.Minute)
		for i := range n {
			if err := os.Chtimes(filepath.Join(mem, "many", fmt.Sprintf("m%03d.md", i)), later, later); err != nil {
				t.Fatal(err)
			}
		}
		if sha, err := h.RecordHandEdits(ctx); err != nil || sha != "" {
			t.Fatalf("%d touched: RecordHandEdits = %q, %v", n, sha, err)
		}
		// The objects, loose or packed, are the same ones.
		after := countObjects(t, h, mem)
		if after["count"]+after["in-pack"] != before["count"]+before["in-pack"] {
			t.Fatalf("%d touched: objects %v became %v", n, before, after)
		}
	}
	p := filepath.Join(mem, "many", "m007.md")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("- memory 700\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	for i := range refreshAt + 50 {
		if err := os.Chtimes(filepath.Join(mem, "many", fmt.Sprintf("m%03d.md", i)), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	sha, err := h.RecordHandEdits(ctx)
	if err != nil || sha == "" {
		t.Fatalf("the same-size edit among touched files: %q, %v", sha, err)
	}
	if e, err := h.Show(ctx, sha); err != nil || len(e.Files) != 1 || e.Files[0].Path != "many/m007.md" {
		t.Fatalf("entry %+v, %v", e.Files, err)
	}
}

// A record runs git's own gc --auto after its commit, in the foreground:
// with more packs than gc.autoPackLimit (set low in the history's own
// config), the record leaves the history in one pack, and the history is
// whole.
func TestRecordRunsGitGCAuto(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	plainGit(t, mem, "--git-dir="+h.GitDir(), "config", "gc.autoPackLimit", "2")
	for d := range 3 {
		writeTree(t, mem, map[string]string{fmt.Sprintf("t%d.md", d): fmt.Sprintf("- revision %d\n", d)})
		if _, err := h.RecordHandEdits(ctx); err != nil {
			t.Fatal(err)
		}
		// A pack of each record's loose objects, as an older history's
		// records or a sync's fetches leave them.
		plainGit(t, mem, "--git-dir="+h.GitDir(), "repack", "-q")
	}
	if c := countObjects(t, h, mem); c["packs"] != 3 {
		t.Fatalf("before: %v, want 3 packs", c)
	}
	writeTree(t, mem, map[string]string{"t9.md": "- the last one\n"})
	m := meta("gc")
	m.Paths = []string{"t9.md"}
	if _, err := h.RecordDream(ctx, m); err != nil {
		t.Fatal(err)
	}
	if c := countObjects(t, h, mem); c["packs"] != 1 || c["count"] != 0 {
		t.Fatalf("after the record: %v, want everything in one pack", c)
	}
	es, err := h.Log(ctx, 0)
	if err != nil || len(es) != 4 {
		t.Fatalf("log: %d entries, %v", len(es), err)
	}
	recordedTree(t, h)
}

// A record whose update-index fails leaves the index as it was: none of
// the dream's files is left staged for the next record to commit under
// another name.
func TestFailedRecordLeavesIndexAlone(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	before := plainGit(t, mem, "--git-dir="+h.GitDir(), "--work-tree="+mem, "ls-files", "--stage")
	files := map[string]string{}
	var paths []string
	for i := range 50 {
		p := fmt.Sprintf("new/n%04d.md", i)
		files[p] = fmt.Sprintf("- note %d\n", i)
		paths = append(paths, p)
	}
	writeTree(t, mem, files)
	// update-index refuses a path beyond a symlink, listed last.
	if err := os.MkdirAll(filepath.Join(mem, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"real/f.md": "x\n"})
	if err := os.Symlink("real", filepath.Join(mem, "ln")); err != nil {
		t.Fatal(err)
	}
	m := meta("half")
	m.Paths = append(paths, "ln/f.md")
	if _, err := h.RecordDream(ctx, m); err == nil {
		t.Fatal("RecordDream through a symlinked directory succeeded")
	}
	if after := plainGit(t, mem, "--git-dir="+h.GitDir(), "--work-tree="+mem, "ls-files", "--stage"); after != before {
		t.Fatalf("the index changed: %d bytes of entries became %d", len(before), len(after))
	}
}
