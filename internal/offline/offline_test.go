package offline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRewriteDates(t *testing.T) {
	ft := time.Date(2026, 3, 31, 9, 0, 0, 0, time.UTC)
	tests := []struct{ in, want string }{
		{"fixed yesterday", "fixed 2026-03-30"},
		{"Yesterday, today and the day before yesterday", "2026-03-30, 2026-03-31 and 2026-03-29"},
		{"Last week we moved", "The week of 2026-03-24 we moved"},
		{"last month", "the month of 2026-02"},
		{"an hour ago", "an hour ago"},
		{"a week ago and 1 day ago", "2026-03-24 and 2026-03-30"},
		{"12 months ago", "the month of 2025-03"},
		{"a few days ago", "a few days ago"},
		{"yesterdays", "yesterdays"},
		{"`yesterday` flag, yesterday", "`yesterday` flag, 2026-03-30"},
		{"odd ` backtick yesterday", "odd ` backtick yesterday"},
		{"前天和大前天", "2026-03-29和2026-03-28"},
		{"十二天前，两个月前", "2026-03-19，2026-01"},
		{"上周期不变", "上周期不变"},
		{"上星期三", "2026-03-24 那周三"},
		{"nothing relative", "nothing relative"},
	}
	for _, tt := range tests {
		got, _ := rewriteDates(tt.in, ft)
		if got != tt.want {
			t.Errorf("rewriteDates(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ a, b string }{
		{"- Use pnpm, not npm.", "use PNPM,   not npm"},
		{"* (see) the *docs*", "1. see the docs"},
		{"用户喜欢简洁的回答。", "用户喜欢简洁的回答"},
	}
	for _, tt := range tests {
		if normalize(tt.a) != normalize(tt.b) {
			t.Errorf("normalize(%q)=%q != normalize(%q)=%q", tt.a, normalize(tt.a), tt.b, normalize(tt.b))
		}
	}
	different := []struct{ a, b string }{
		{"timeout < 5s always", "timeout > 5s always"},
		{"a != b holds here", "a = b holds here"},
		{"don't use cgo here", "dont use cgo here"},
	}
	for _, tt := range different {
		if normalize(tt.a) == normalize(tt.b) {
			t.Errorf("normalize(%q) == normalize(%q): distinct facts merged", tt.a, tt.b)
		}
	}
}

func TestMakePointer(t *testing.T) {
	long := strings.Repeat("word ", 60)
	tests := []struct {
		title, target, hook string
		max                 int
		want                string
	}{
		{"A", "a.md", "hook", 150, "- [A](a.md) — hook"},
		{"A [b]", "my file.md", "", 150, "- [A (b)](<my file.md>)"},
	}
	for _, tt := range tests {
		if got := makePointer(tt.title, tt.target, tt.hook, tt.max); got != tt.want {
			t.Errorf("makePointer = %q, want %q", got, tt.want)
		}
	}
	p := makePointer("Title", "a.md", long, 150)
	if n := len([]rune(p)); n > 150 || !strings.HasPrefix(p, "- [Title](a.md) — word") || !strings.HasSuffix(p, "…") {
		t.Errorf("long pointer (%d runes) = %q", n, p)
	}
}

func TestDefaultFileTime(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"MEMORY.md": "- [A](a.md) — a\n- [B](b.md) — b\n",
		"a.md":      "---\nname: A\nupdated: 2026-01-10\n---\nyesterday it broke\n",
		"b.md":      "---\nname: B\n---\nyesterday it broke too\n",
	})
	mtime := time.Date(2026, 2, 20, 8, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "b.md"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if _, err := Run(context.Background(), Options{MemoryDir: dir, Now: now}); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"a.md": "2026-01-09 it broke", "b.md": "2026-02-19 it broke too"} {
		data, _ := os.ReadFile(filepath.Join(dir, file))
		if !strings.Contains(string(data), want) {
			t.Errorf("%s = %q, want %q", file, data, want)
		}
	}
}

func TestRunCreatesIndexAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "---\nname: Alpha\ndescription: first\n---\ntoday\n"})
	if err := os.Chmod(filepath.Join(dir, "a.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: now, FileTime: func(string) time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.FilesTouched, []string{"MEMORY.md", "a.md"}) {
		t.Errorf("touched = %v", rep.FilesTouched)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	if string(idx) != "- [Alpha](a.md) — first\n" {
		t.Errorf("index = %q", idx)
	}
	info, _ := os.Stat(filepath.Join(dir, "a.md"))
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v", info.Mode())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".dream-offline-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(context.Background(), Options{}); err == nil {
		t.Error("no memory dir: want error")
	}
	if _, err := Run(context.Background(), Options{MemoryDir: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Error("missing memory dir: want error")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"MEMORY.md": "- [A](gone.md)\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{MemoryDir: dir}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md")); string(data) != "- [A](gone.md)\n" {
		t.Errorf("cancelled run wrote %q", data)
	}
}

func TestNotesWhenPointersAloneOverBudget(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var idx strings.Builder
	for i := 0; i < 230; i++ {
		name := "t" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "-" + strconv.Itoa(i) + ".md"
		files[name] = "---\nname: T\n---\nbody " + strconv.Itoa(i) + "\n"
		idx.WriteString("- [T" + strconv.Itoa(i) + "](" + name + ") — topic number " + strconv.Itoa(i) + "\n")
	}
	files["MEMORY.md"] = idx.String()
	writeFiles(t, dir, files)
	rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.FilesTouched) != 0 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "need merging") {
		t.Errorf("report = %+v", rep)
	}
}

func TestPinned(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"MEMORY.md": "- [A](a.md) — a\n- Never force-push main. <!-- pin -->\n",
		"a.md":      "---\nname: A\n---\n  * The prod DB is   read-only on Fridays <!--PIN-->\n",
	})
	facts, err := PinnedFacts(dir, []string{"  custom fact  ", "Never force-push main.", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Never force-push main.", "The prod DB is   read-only on Fridays", "custom fact"}
	if !reflect.DeepEqual(facts, want) {
		t.Fatalf("facts = %q", facts)
	}
	writeFiles(t, dir, map[string]string{"a.md": "The prod DB is read-only\non Fridays.\n"})
	missing, err := MissingPinned(facts, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(missing, []string{"custom fact"}) {
		t.Errorf("missing = %q", missing)
	}
	if _, err := PinnedFacts(filepath.Join(dir, "none"), nil); err == nil {
		t.Error("want error for missing dir")
	}
}
