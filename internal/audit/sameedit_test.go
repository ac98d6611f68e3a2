package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSameSizeEditWithMtimePutBackIsRecorded: an edit in place that keeps
// the size and puts the mtime back (cp -p, rsync --inplace -t, touch -r) is
// still a hand edit. Git's stat check catches it only by the ctime; with
// core.trustctime=false it was missed, recorded as the next dream's change,
// and undoing that dream erased the user's edit.
func TestSameSizeEditWithMtimePutBackIsRecorded(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(mem, "MEMORY.md")
	if err := os.WriteFile(p, []byte("# Memory\n\n- alpha fact\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	// Into the next second: git compares whole seconds of the ctime, so
	// the edit must come in a later second than the record, as any edit
	// that matters does.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("# Memory\n\n- omega fact\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	commit, err := h.RecordHandEdits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.HeadFile(ctx, "MEMORY.md")
	if err != nil {
		t.Fatal(err)
	}
	if commit == "" || string(got) != "# Memory\n\n- omega fact\n" {
		t.Fatalf("the same-size edit was not recorded (commit %q); HEAD holds %q", commit, got)
	}
}
