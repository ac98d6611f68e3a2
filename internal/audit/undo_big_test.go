package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file over the merge limit (a pasted log) is undone by streaming its
// version from the history: restored byte for byte when untouched since,
// a conflict when changed after the dream, restored wholesale with force.
func TestUndoLargeFileStreams(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	line := []byte("2026-11-30T09:00:00Z INFO request served 用户 ok\n")
	big := bytes.Repeat(line, int(maxMergeSize)/len(line)+1000)
	log := filepath.Join(mem, "logs", "paste.log")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	dreamt := append(append([]byte{}, big[:len(big)/2]...), "- summarised: the second half was noise\n"...)
	if err := os.WriteFile(log, dreamt, 0o644); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"notes.md": "# Notes\n\n- the log was trimmed\n"})
	if _, err := h.RecordDream(ctx, meta("big1")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Undo(ctx, "big1", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(log); !bytes.Equal(got, big) {
		t.Fatalf("undo restored %d bytes, want the %d before the dream", len(got), len(big))
	}
	// Dream again, then the user appends: too large to merge.
	if err := os.WriteFile(log, dreamt, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RecordDream(ctx, meta("big2")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, append(append([]byte{}, dreamt...), "user line\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := h.Undo(ctx, "big2", false)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "logs/paste.log: too large to merge") {
		t.Fatalf("undo over a later edit of a large file = %v, want a conflict naming it", err)
	}
	if _, err := h.Undo(ctx, "big2", true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(log); !bytes.Equal(got, big) {
		t.Fatalf("forced undo restored %d bytes, want %d", len(got), len(big))
	}
}
