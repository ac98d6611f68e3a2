package offline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzRewriteDates: any line rewrites without panic, a rewritten line has
// nothing left to rewrite, and an unchanged line reports no change.
func FuzzRewriteDates(f *testing.F) {
	f.Add("yesterday and 3 days ago, 上周 and 两个月前")
	f.Add("`today` today")
	ft := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		out, ch := rewriteDates(s, ft)
		if len(ch) == 0 && out != s {
			t.Fatalf("changed without a record: %q → %q", s, out)
		}
		again, ch2 := rewriteDates(out, ft)
		if len(ch2) != 0 && len(ch) > 0 {
			t.Fatalf("not final: %q → %q → %q (%v)", s, out, again, ch2)
		}
	})
}

// FuzzMentions: any line yields well-formed mentions.
func FuzzMentions(f *testing.F) {
	f.Add("`LoadConfig` in internal/config/loader.go and server.go")
	f.Add("`a/../../b` `x.y.z()`")
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range mentions(s) {
			if m.Mention == "" || (m.Kind != "path" && m.Kind != "file" && m.Kind != "identifier") {
				t.Fatalf("bad mention %+v from %q", m, s)
			}
			if strings.HasPrefix(m.Mention, "/") || strings.HasPrefix(m.Mention, "..") {
				t.Fatalf("mention escapes the repo: %+v", m)
			}
		}
	})
}

// FuzzRun: the engine accepts any index and topic, a second run changes
// nothing, and it never leaves a file it did not need to touch different.
func FuzzRun(f *testing.F) {
	f.Add("# M\n- [A](a.md) — a\n- [B](b.md)\n- x y z w\n", "---\nname: A\n---\n- x y z w\nyesterday\n")
	f.Add("", "")
	now := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, index, topic string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(index), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte(topic), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{MemoryDir: dir, Now: now, FileTime: func(string) time.Time { return now }}
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.FilesTouched) != 0 {
			t.Fatalf("second run changed %v: %+v", rep.FilesTouched, rep.Fixes)
		}
	})
}
