package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAuditHistoryDatesAHandEdit: a line appended by hand between two
// dreams was recorded by the audit history in a window of one day, so the
// offline engine knows the day it was written and resolves its "yesterday"
// from it; the file's mtime plays no part (it is set to a week later).
func TestAuditHistoryDatesAHandEdit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(w.mem, "notes.md", "---\nname: notes\ndescription: notes\ntype: project\n---\n\n- The cache sits in front of the catalog.\n")
	w.write(w.mem, "MEMORY.md", "# Memory\n\n- [Build](build.md) — how the project builds\n- [Notes](notes.md) — notes\n")
	if r := w.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"run"}, w.locFlags()...)...); r.code != 0 {
		t.Fatalf("first dream:\n%s", r)
	}
	p := filepath.Join(w.mem, "notes.md")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(data, []byte("- Yesterday the cache was turned off.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(7 * 24 * time.Hour)
	os.Chtimes(p, later, later)
	day := time.Now().Format("2006-01-02")
	r := w.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"run"}, w.locFlags()...)...)
	if r.code != 0 {
		t.Fatalf("second dream:\n%s", r)
	}
	if time.Now().Format("2006-01-02") != day {
		t.Skip("the day changed during the test")
	}
	got, _ := os.ReadFile(p)
	want := "- On " + time.Now().AddDate(0, 0, -1).Format("2006-01-02") + " the cache was turned off.\n"
	if !strings.Contains(string(got), want) {
		t.Fatalf("want %q from the audit window:\n%s\n%s", want, got, r)
	}
}
