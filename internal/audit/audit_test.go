package audit

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/journal"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

var started = time.Date(2025, 3, 1, 3, 4, 5, 0, time.UTC)

// topic is a 30-line file so edits far apart do not touch.
var topic = lines(30, func(i int) string { return fmt.Sprintf("fact %d", i) })

func preTree() map[string]string {
	return map[string]string{
		"MEMORY.md":      "# Memory\n- [Topic](topic.md) facts\n- [Old](old.md) stale\n",
		"topic.md":       topic,
		"old.md":         "an old memory\n",
		"sub/keep.md":    "keep\n",
		journal.LockName: "1234",
	}
}

// dream changes topic.md line 2, rewrites the index, deletes old.md and adds
// new.md.
func dream(t *testing.T, mem string) {
	writeTree(t, mem, map[string]string{
		"MEMORY.md": "# Memory\n- [Topic](topic.md) facts\n- [New](new.md) learned 2025-03-01\n",
		"topic.md":  strings.Replace(topic, "fact 2\n", "fact two (2025-03-01)\n", 1),
		"old.md":    "",
		"new.md":    "a new memory\n",
	})
}

func setup(t *testing.T) (*History, string) {
	t.Helper()
	t.Parallel() // each test waits mostly on git processes
	needGit(t)
	mem := t.TempDir()
	writeTree(t, mem, preTree())
	// A state dir whose name is a glob pattern: nothing may read its path
	// as one.
	h, err := Open(testCtx(t), filepath.Join(t.TempDir(), "state [1]*"), mem)
	if err != nil {
		t.Fatal(err)
	}
	return h, mem
}

func meta(id string) Meta {
	return Meta{DreamID: id, Status: "completed", Provider: "offline", Model: "none", StartedAt: started, Kind: KindDream}
}

func TestRecordDreamLogShow(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	base, err := h.RecordHandEdits(ctx)
	if err != nil || base == "" {
		t.Fatalf("baseline = %q, %v", base, err)
	}
	if again, err := h.RecordHandEdits(ctx); err != nil || again != "" {
		t.Fatalf("clean RecordHandEdits = %q, %v", again, err)
	}
	dream(t, mem)
	sha, err := h.RecordDream(ctx, meta("d-20250301"))
	if err != nil || sha == "" {
		t.Fatalf("RecordDream = %q, %v", sha, err)
	}
	if again, err := h.RecordDream(ctx, meta("d-again")); err != nil || again != "" {
		t.Fatalf("RecordDream without changes = %q, %v", again, err)
	}
	log, err := h.Log(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 {
		t.Fatalf("log has %d entries", len(log))
	}
	e := log[0]
	if e.ID != "d-20250301" || e.Commit != sha || e.Kind != KindDream || e.Status != "completed" || !e.StartedAt.Equal(started) {
		t.Fatalf("entry = %+v", e)
	}
	want := []FileStat{
		{"MEMORY.md", 1, 1, "modified"},
		{"new.md", 1, 0, "added"},
		{"old.md", 0, 1, "deleted"},
		{"topic.md", 1, 1, "modified"},
	}
	if fmt.Sprint(e.Files) != fmt.Sprint(want) {
		t.Fatalf("files = %+v, want %+v", e.Files, want)
	}
	for _, s := range []string{"+fact two (2025-03-01)", "-an old memory", "diff --git a/new.md b/new.md"} {
		if !strings.Contains(e.Diff, s) {
			t.Errorf("diff lacks %q:\n%s", s, e.Diff)
		}
	}
	if log[1].Kind != KindHand || log[1].ID != "hand-"+base[:10] || len(log[1].Files) != 4 {
		t.Errorf("baseline entry = %+v", log[1])
	}
	msg := plainGit(t, mem, "--git-dir="+h.GitDir(), "log", "-1", "--format=%B", sha)
	checkGolden(t, "dream_message.golden", msg)

	for _, id := range []string{"d-20250301", "d-2025", sha[:8], "hand-" + base[:10]} {
		got, err := h.Show(ctx, id)
		if err != nil {
			t.Errorf("Show(%q): %v", id, err)
			continue
		}
		if id != "hand-"+base[:10] && got.Commit != sha {
			t.Errorf("Show(%q) = %s", id, got.Commit)
		}
	}
	if _, err := h.Show(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Show(nope) = %v", err)
	}
	if _, err := h.RecordDream(ctx, Meta{}); err == nil {
		t.Error("RecordDream accepted an empty id")
	}
}

func TestMessageTruncatesLongDiff(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"big.md": lines(500, func(i int) string { return fmt.Sprintf("line %d", i) })})
	sha, err := h.RecordDream(ctx, meta("big"))
	if err != nil {
		t.Fatal(err)
	}
	msg := plainGit(t, mem, "--git-dir="+h.GitDir(), "log", "-1", "--format=%B", sha)
	if !strings.Contains(msg, "… diff truncated") || strings.Count(msg, "\n") > 230 {
		t.Fatalf("message not capped (%d lines)", strings.Count(msg, "\n"))
	}
	if !strings.HasPrefix(msg, "dream big: 1 file (+500 −0)\n") {
		t.Fatalf("subject: %q", strings.SplitN(msg, "\n", 2)[0])
	}
	e, err := h.Show(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Diff, "+line 500") {
		t.Fatal("Show must return the full diff, not the capped message")
	}
}

func TestHandEditsRecordedAndOwnFilesExcluded(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	writeTree(t, mem, map[string]string{journal.TempPrefix + "x": "tmp", "sub/" + journal.TempPrefix + "y": "tmp"})
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"topic.md": topic + "typed by hand\n", journal.LockName: "4242"})
	sha, err := h.RecordHandEdits(ctx)
	if err != nil || sha == "" {
		t.Fatalf("RecordHandEdits = %q, %v", sha, err)
	}
	e, err := h.Show(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != KindHand || len(e.Files) != 1 || e.Files[0].Path != "topic.md" || e.Files[0].Added != 1 {
		t.Fatalf("hand entry = %+v", e)
	}
	tracked := plainGit(t, mem, "--git-dir="+h.GitDir(), "ls-tree", "-r", "--name-only", "HEAD")
	for _, bad := range []string{journal.LockName, journal.TempPrefix} {
		if strings.Contains(tracked, bad) {
			t.Fatalf("%s committed:\n%s", bad, tracked)
		}
	}
	if _, err := os.Stat(filepath.Join(mem, ".git")); !os.IsNotExist(err) {
		t.Fatal("a .git appeared in the memory dir")
	}
}

func TestUndoRestoresTreeByteForByte(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	before := treeHash(t, mem)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	dream(t, mem)
	if _, err := h.RecordDream(ctx, meta("d1")); err != nil {
		t.Fatal(err)
	}
	e, err := h.Undo(ctx, "d1", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := treeHash(t, mem); got != before {
		t.Fatalf("tree after undo\n%s\nwant\n%s", got, before)
	}
	if e.Kind != KindUndo || !strings.HasPrefix(e.ID, "undo-d1-") || len(e.Files) != 4 {
		t.Fatalf("undo entry = %+v", e)
	}
	log, err := h.Log(ctx, 0)
	if err != nil || len(log) != 3 || log[0].Commit != e.Commit {
		t.Fatalf("log after undo: %d entries, %v", len(log), err)
	}
	// Undoing the undo brings the dream back.
	if _, err := h.Undo(ctx, e.ID, false); err != nil {
		t.Fatal(err)
	}
	if read(t, mem, "new.md") != "a new memory\n" {
		t.Fatal("undo of undo did not restore the dream")
	}
}

func TestUndoKeepsLaterNonOverlappingEdits(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	dream(t, mem)
	if _, err := h.RecordDream(ctx, meta("d1")); err != nil {
		t.Fatal(err)
	}
	dreamt := read(t, mem, "topic.md")
	writeTree(t, mem, map[string]string{
		"topic.md":    strings.Replace(dreamt, "fact 25\n", "fact 25, edited by hand\n", 1),
		"sub/keep.md": "keep, edited\n",
	})
	if _, err := h.Undo(ctx, "d1", false); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(topic, "fact 25\n", "fact 25, edited by hand\n", 1)
	if got := read(t, mem, "topic.md"); got != want {
		t.Fatalf("topic.md after undo:\n%s", got)
	}
	if read(t, mem, "sub/keep.md") != "keep, edited\n" || read(t, mem, "old.md") != "an old memory\n" {
		t.Fatal("undo lost a hand edit or did not restore old.md")
	}
	if _, err := os.Stat(filepath.Join(mem, "new.md")); !os.IsNotExist(err) {
		t.Fatal("new.md, added by the dream, survived the undo")
	}
}

func TestUndoConflictThenForce(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	dream(t, mem)
	if _, err := h.RecordDream(ctx, meta("d1")); err != nil {
		t.Fatal(err)
	}
	dreamt := read(t, mem, "topic.md")
	writeTree(t, mem, map[string]string{
		"topic.md": strings.Replace(dreamt, "fact two (2025-03-01)\n", "fact two, corrected by hand\n", 1),
		"new.md":   "a new memory\nplus a hand note\n",
	})
	edited := treeHash(t, mem)
	_, err := h.Undo(ctx, "d1", false)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("Undo = %v, want ErrConflict", err)
	}
	for _, s := range []string{"topic.md: lines 2", "new.md: edited after the dream created it"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if treeHash(t, mem) != edited {
		t.Fatal("a refused undo changed the memory dir")
	}
	if _, err := h.Undo(ctx, "d1", true); err != nil {
		t.Fatal(err)
	}
	if read(t, mem, "topic.md") != topic || read(t, mem, "MEMORY.md") != preTree()["MEMORY.md"] {
		t.Fatal("forced undo did not restore the pre-dream content")
	}
	if _, err := os.Stat(filepath.Join(mem, "new.md")); !os.IsNotExist(err) {
		t.Fatal("forced undo kept new.md")
	}
	// The hand edits were recorded first, so nothing is lost.
	log, err := h.Log(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h.FileAt(ctx, log[1].Commit, "new.md"); err != nil || !strings.Contains(string(got), "plus a hand note") {
		t.Fatalf("hand edit not in history: %q, %v (log %v)", got, err, log[1].ID)
	}
}

func TestUndoRefusesFirstState(t *testing.T) {
	h, _ := setup(t)
	ctx := testCtx(t)
	sha, err := h.RecordHandEdits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Undo(ctx, sha, false); err == nil || !strings.Contains(err.Error(), "first recorded state") {
		t.Fatalf("Undo of the baseline = %v", err)
	}
}

func TestFileAtKeepsDeletedMemory(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	dream(t, mem)
	sha, err := h.RecordDream(ctx, meta("d1"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.FileAt(ctx, sha+"^", "old.md")
	if err != nil || string(got) != "an old memory\n" {
		t.Fatalf("FileAt(before, old.md) = %q, %v", got, err)
	}
	if _, err := h.FileAt(ctx, "d1", "old.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FileAt(d1, old.md) = %v, want not exist", err)
	}
	for _, bad := range []struct{ rev, path string }{{"d1", "../x"}, {"d1", "/etc/passwd"}, {"--help", "a.md"}, {"d1", "a//b"}} {
		if _, err := h.FileAt(ctx, bad.rev, bad.path); err == nil {
			t.Errorf("FileAt(%q, %q) succeeded", bad.rev, bad.path)
		}
	}
}

// TestEnclosingRepoUntouched puts the memory dir inside a user's repository
// and runs the whole life cycle, with GIT_DIR and GIT_INDEX_FILE pointing at
// that repository as they would inside a git hook.
func TestEnclosingRepoUntouched(t *testing.T) {
	needGit(t)
	outer := t.TempDir()
	plainGit(t, outer, "init", "-q")
	mem := filepath.Join(outer, "memory")
	writeTree(t, outer, map[string]string{"README": "outer\n"})
	writeTree(t, mem, preTree())
	plainGit(t, outer, "add", "-A")
	plainGit(t, outer, "commit", "-q", "-m", "outer")
	writeTree(t, outer, map[string]string{"README": "outer, uncommitted\n"})
	statusBefore := plainGit(t, outer, "status", "--porcelain")
	headBefore := plainGit(t, outer, "rev-parse", "HEAD")
	index := filepath.Join(outer, ".git", "index")
	indexBefore, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", filepath.Join(outer, ".git"))
	t.Setenv("GIT_INDEX_FILE", index)
	t.Setenv("GIT_WORK_TREE", outer)

	ctx := testCtx(t)
	h, err := Open(ctx, t.TempDir(), mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	dream(t, mem)
	if _, err := h.RecordDream(ctx, meta("d1")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Undo(ctx, "d1", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(index); string(got) != string(indexBefore) {
		t.Errorf("outer index rewritten")
	}
	if got := plainGit(t, outer, "status", "--porcelain"); got != statusBefore {
		t.Errorf("outer status changed:\n%s\nwant\n%s", got, statusBefore)
	}
	if got := plainGit(t, outer, "rev-parse", "HEAD"); got != headBefore {
		t.Errorf("outer HEAD moved")
	}
	if _, err := os.Stat(filepath.Join(mem, ".git")); !os.IsNotExist(err) {
		t.Errorf("a .git appeared in the memory dir")
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	needGit(t)
	mem := t.TempDir()
	ctx := testCtx(t)
	if _, err := Open(ctx, "", mem); err == nil {
		t.Error("Open accepted an empty state dir")
	}
	if _, err := Open(ctx, t.TempDir(), filepath.Join(mem, "missing")); err == nil {
		t.Error("Open accepted a missing memory dir")
	}
	cancelled, cancel := contextWithCancel(ctx)
	cancel()
	if _, err := Open(cancelled, t.TempDir(), mem); err == nil {
		t.Error("Open ignored a cancelled context")
	}
	// Reopening an existing history works and keeps it.
	state := t.TempDir()
	writeTree(t, mem, map[string]string{"a.md": "a\n"})
	h, err := Open(ctx, state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	h2, err := Open(ctx, state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if log, err := h2.Log(ctx, 0); err != nil || len(log) != 1 {
		t.Fatalf("reopened log = %d, %v", len(log), err)
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

// A dream's units are kept in its commit and read back by Show and Log,
// whatever the diff quoted in the message says.
func TestUnitsTravelWithTheRecord(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	// The diff quotes a line that looks like the units heading.
	writeTree(t, mem, map[string]string{"topic.md": strings.Replace(topic, "fact 2\n", unitsHeading+"{\"forged\":true}\n", 1)})
	m := meta("d-units")
	m.Units = []json.RawMessage{json.RawMessage(`{"fate": "rewritten", "text": "fact 2\n"}`), json.RawMessage(`{"fate":"deleted"}`)}
	if _, err := h.RecordDream(ctx, m); err != nil {
		t.Fatal(err)
	}
	e, err := h.Show(ctx, "d-units")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s", e.Units)
	if want := `[{"fate":"rewritten","text":"fact 2\n"} {"fate":"deleted"}]`; got != want {
		t.Errorf("units %s, want %s", got, want)
	}
	log, err := h.Log(ctx, 1)
	if err != nil || len(log) != 1 || len(log[0].Units) != 2 {
		t.Fatalf("log: %+v, %v", log, err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"topic.md": topic})
	if _, err := h.RecordDream(ctx, meta("d-none")); err != nil {
		t.Fatal(err)
	}
	if e, err := h.Show(ctx, "d-none"); err != nil || e.Units != nil {
		t.Errorf("a record without units: %v, %v", e.Units, err)
	}
}
