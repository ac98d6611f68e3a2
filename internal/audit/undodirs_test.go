package audit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// TestUndoRemovesTheDirectoriesItEmptied is issue 28's undo of a deeply
// nested note that left its empty directories behind. Undo removes a
// directory that the files it removed left empty and that the dream made;
// it keeps one the user had (with a file before the dream, or empty and
// born before it, which git cannot see) and one that is not empty.
func TestUndoRemovesTheDirectoriesItEmptied(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	writeTree(t, mem, map[string]string{"had/old.md": "the user's\n"})
	if err := os.Mkdir(filepath.Join(mem, "drafts"), 0o755); err != nil { // empty: not in the history
		t.Fatal(err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the dream's start is recorded to the second
	start := time.Now()
	writeTree(t, mem, map[string]string{
		"a/b/c/note.md":  "deep\n",
		"sub/deep/n.md":  "under a directory the user had\n",
		"drafts/idea.md": "in the user's empty directory\n",
		"x/y/z.md":       "beside a later hand edit\n",
		"had/new.md":     "beside the user's file\n",
	})
	m := meta("d1")
	m.StartedAt = start
	if _, err := h.RecordDream(ctx, m); err != nil {
		t.Fatal(err)
	}
	// After the dream, by hand: a file beside its directory, and the
	// user's own file removed.
	writeTree(t, mem, map[string]string{"x/mine.md": "mine\n"})
	if err := os.Remove(filepath.Join(mem, "had/old.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Undo(ctx, "d1", false); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"a", "sub/deep", "x/y"} {
		if _, err := os.Lstat(filepath.Join(mem, gone)); !os.IsNotExist(err) {
			t.Errorf("%s/ is still there after the undo (%v)", gone, err)
		}
	}
	for _, kept := range []string{"sub/keep.md", "x/mine.md", "had"} {
		if _, err := os.Lstat(filepath.Join(mem, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	root, err := os.OpenRoot(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := os.Lstat(filepath.Join(mem, "drafts")); err != nil {
		if fsutil.BornBefore(root, ".", time.Now()) {
			t.Errorf("the user's empty drafts/ was removed: %v", err)
		} else {
			t.Logf("this file system keeps no birth time: drafts/ went with the dream's file (%v)", err)
		}
	}
}
