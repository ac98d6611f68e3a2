package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A directory of the memory dir replaced by a symlink to elsewhere after a
// dream must not let Undo write or delete through it, even with force.
func TestUndoNeverWritesThroughASymlinkedDir(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprintf("force=%v", force), func(t *testing.T) { undoThroughSymlink(t, force) })
	}
}

func undoThroughSymlink(t *testing.T, force bool) {
	{
		h, mem := setup(t)
		ctx := testCtx(t)
		if _, err := h.RecordHandEdits(ctx); err != nil {
			t.Fatal(err)
		}
		// The dream deletes sub/keep.md and adds sub/new.md.
		writeTree(t, mem, map[string]string{"sub/keep.md": "", "sub/new.md": "new\n"})
		if _, err := h.RecordDream(ctx, meta("d1")); err != nil {
			t.Fatal(err)
		}
		outside := t.TempDir()
		writeTree(t, outside, map[string]string{"new.md": "new\n", "other.md": "mine\n"})
		if err := os.RemoveAll(filepath.Join(mem, "sub")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(mem, "sub")); err != nil {
			t.Fatal(err)
		}
		before := treeHash(t, outside)
		_, err := h.Undo(ctx, "d1", force)
		if !errors.Is(err, ErrConflict) {
			t.Errorf("force=%v: Undo = %v, want ErrConflict", force, err)
		}
		if got := treeHash(t, outside); got != before {
			t.Fatalf("force=%v: Undo changed a directory outside the memory dir:\n%s\nwant\n%s", force, got, before)
		}
	}
}
