package audit

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUndoFirstDream: a dream recorded first, on a dir that was empty (a
// job's first report), is undone to the empty dir it started from; the
// file stays in the history.
func TestUndoFirstDream(t *testing.T) {
	t.Parallel()
	needGit(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	h, err := Open(ctx, t.TempDir(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if sha, err := h.RecordHandEdits(ctx); err != nil || sha != "" {
		t.Fatalf("hand edits of an empty dir = %q, %v; want none", sha, err)
	}
	writeTree(t, dir, map[string]string{"report.md": "# Report\n"})
	if _, err := h.RecordDream(ctx, meta("d1")); err != nil {
		t.Fatal(err)
	}
	e, err := h.Undo(ctx, "d1", false)
	if err != nil {
		t.Fatalf("undo of the first dream: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); !os.IsNotExist(err) {
		t.Fatalf("report.md after the undo: %v", err)
	}
	if len(e.Files) != 1 || e.Files[0].Status != "deleted" {
		t.Fatalf("undo entry files = %+v", e.Files)
	}
	if b, err := h.FileAt(ctx, "d1", "report.md"); err != nil || string(b) != "# Report\n" {
		t.Fatalf("the undone report in the history = %q, %v", b, err)
	}
}
