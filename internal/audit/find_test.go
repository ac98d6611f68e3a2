package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindLocatesEveryKindOfEntry: a dream's id, its undo's id and a hand
// edit's id each lead back to the memory dir they belong to, across several
// memory dirs sharing a state dir, even once the memory dir is gone.
func TestFindLocatesEveryKindOfEntry(t *testing.T) {
	needGit(t)
	ctx := testCtx(t)
	root := t.TempDir()
	state := filepath.Join(root, "state [1]*") // a path, not a glob pattern
	open := func(name string) (*History, string) {
		mem := filepath.Join(root, name)
		writeTree(t, mem, map[string]string{"MEMORY.md": "# Memory\n\n- [项目](project.md) — 构建\n", "project.md": "# 项目\n\n1. Run `make`.\n2. Run `make test`.\n"})
		h, err := Open(ctx, state, mem)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.RecordHandEdits(ctx); err != nil {
			t.Fatal(err)
		}
		return h, h.MemoryDir()
	}
	ha, memA := open("notes a")
	hb, memB := open("notes-b")
	writeTree(t, memA, map[string]string{"project.md": "# 项目\n\n1. Run `make` (2026-11-30).\n2. Run `make test`.\n"})
	if _, err := ha.RecordDream(ctx, Meta{DreamID: "20261201-120000-aaaa", Kind: KindDream, Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	writeTree(t, memB, map[string]string{"MEMORY.md": "# Memory\n"})
	if _, err := hb.RecordDream(ctx, Meta{DreamID: "20261201-130000-bbbb", Kind: KindDream, Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	undo, err := ha.Undo(ctx, "20261201-120000-aaaa", false)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, memB, map[string]string{"by-hand.md": "written by hand\n"})
	hand, err := hb.RecordHandEdits(ctx)
	if err != nil || hand == "" {
		t.Fatalf("hand edits: %q %v", hand, err)
	}
	handID := "hand-" + hand[:10]
	for _, c := range []struct{ id, mem, full string }{
		{"20261201-120000-aaaa", memA, "20261201-120000-aaaa"},
		{"20261201-1200", memA, "20261201-120000-aaaa"},
		{"20261201-130000-bbbb", memB, "20261201-130000-bbbb"},
		{undo.ID, memA, undo.ID},
		{handID, memB, handID},
	} {
		got, err := Find(ctx, state, c.id)
		if err != nil || len(got) != 1 || got[0].MemoryDir != c.mem || got[0].ID != c.full {
			t.Errorf("Find(%q) = %+v, %v; want %s in %s", c.id, got, err, c.full, c.mem)
		}
	}
	if got, err := Find(ctx, state, "20990101-000000-dead"); err != nil || len(got) != 0 {
		t.Errorf("unknown id: %+v, %v", got, err)
	}
	// A prefix both histories know is reported for both: the caller asks
	// which one.
	if got, err := Find(ctx, state, "20261201-1"); err != nil || len(got) != 2 {
		t.Errorf("shared prefix: %+v, %v; want both memory dirs", got, err)
	}
	if err := os.RemoveAll(memB); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(ctx, state, "20261201-130000-bbbb"); err != nil || len(got) != 1 || got[0].MemoryDir != memB {
		t.Errorf("after the memory dir was removed: %+v, %v", got, err)
	}
}

// TestFindSkipsUnnotedAndHostileNotes: a repository without a note (made
// before notes existed) is skipped until it is next opened, and a note that
// is not one absolute path is ignored rather than trusted.
func TestFindSkipsUnnotedAndHostileNotes(t *testing.T) {
	h, mem := setup(t) // parallel: the context's clock starts once the test runs
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	dream(t, mem)
	if _, err := h.RecordDream(ctx, meta("d-20250301")); err != nil {
		t.Fatal(err)
	}
	state := filepath.Dir(filepath.Dir(h.GitDir()))
	note := filepath.Join(h.GitDir(), memoryDirNote)
	for _, bad := range []string{"", "relative/dir\n", mem + "\n/etc\n"} {
		if err := os.WriteFile(note, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := Find(ctx, state, "d-20250301"); err != nil || len(got) != 0 {
			t.Errorf("note %q: %+v, %v; want it ignored", bad, got, err)
		}
	}
	os.Remove(note)
	if got, _ := Find(ctx, state, "d-20250301"); len(got) != 0 {
		t.Errorf("no note: %+v", got)
	}
	if _, err := Open(ctx, state, mem); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(ctx, state, "d-20250301"); err != nil || len(got) != 1 || !strings.HasSuffix(got[0].MemoryDir, filepath.Base(mem)) {
		t.Errorf("after reopening: %+v, %v", got, err)
	}
}
