package offline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// allText is every file under dir, concatenated.
func allText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		b.WriteByte('\n')
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRewriteDatesLeavesURLsAndLinkTargets(t *testing.T) {
	ft := time.Date(2026, 3, 31, 9, 0, 0, 0, time.UTC)
	tests := []struct{ in, want string }{
		{"see https://example.com/today/notes for it", "see https://example.com/today/notes for it"},
		{"- [Notes](notes/yesterday.md) — written yesterday", "- [Notes](notes/yesterday.md) — written 2026-03-30"},
		{"<https://wiki.example.com/last-week> yesterday", "<https://wiki.example.com/last-week> 2026-03-30"},
		{"[会议](会议/今天.md) 今天", "[会议](会议/今天.md) 2026-03-31"},
	}
	for _, tt := range tests {
		got, _ := rewriteDates(tt.in, ft)
		if got != tt.want {
			t.Errorf("rewriteDates(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDatesSkipLongerFence(t *testing.T) {
	dir := t.TempDir()
	in := "# Notes\n\n````md\n```\nran it yesterday\n```\n````\n"
	writeFiles(t, dir, map[string]string{"MEMORY.md": "# Memory\n\n- [Notes](notes.md) — notes\n", "notes.md": in})
	if _, err := Run(context.Background(), Options{MemoryDir: dir, FileTime: func(string) time.Time { return time.Now() }}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "notes.md"))
	if string(got) != in {
		t.Errorf("code inside a four-backtick fence changed:\n%s", got)
	}
}

func TestDanglingPointerKeepsItsHook(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"MEMORY.md": "# Memory\n\n- [Build](build.md) — make build\n- [API](api.md) — the partner API allows 100 requests per minute\n- [Gone](gone.md)\n",
		"build.md":  "# Build\n\nmake build\n",
	})
	if _, err := Run(context.Background(), Options{MemoryDir: dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(allText(t, dir), "the partner API allows 100 requests per minute") {
		t.Error("the fact in a dangling pointer's hook was deleted")
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	if strings.Contains(string(idx), "(api.md)") || strings.Contains(string(idx), "(gone.md)") {
		t.Errorf("dangling pointers left in the index:\n%s", idx)
	}
}

func TestBudgetLeavesPinnedIndexLines(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# Memory\n\n- Never force-push to main <!-- pin -->\n")
	files := map[string]string{}
	for i := 0; i < 210; i++ {
		name := "t" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + itoa(i) + ".md"
		files[name] = "# T\n\nfact " + itoa(i) + "\n"
		b.WriteString("- [T" + itoa(i) + "](" + name + ")\n")
		if i%2 == 0 {
			b.WriteString("detail line number " + itoa(i) + "\n")
		}
	}
	files["MEMORY.md"] = b.String()
	writeFiles(t, dir, files)
	if _, err := Run(context.Background(), Options{MemoryDir: dir}); err != nil {
		t.Fatal(err)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	if !strings.Contains(string(idx), "Never force-push to main <!-- pin -->") {
		t.Error("a pinned index line was moved out of the index")
	}
	if strings.Contains(string(idx), "detail line number 4\n") {
		t.Error("budget fix did not run")
	}
}

func itoa(i int) string { return fmtInt(i) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

func TestUnindexedOddFileNamesAreStable(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"MEMORY.md":    "# Memory\n\n- [Build](build.md) — how to build\n",
		"build.md":     "# Build\n\nmake\n",
		"c#-notes.md":  "---\nname: C# notes\ndescription: C# conventions\n---\n\nuse records\n",
		"why?.md":      "---\nname: Why\ndescription: reasons\n---\n\nbecause\n",
		"100%-sure.md": "---\nname: Sure\ndescription: certain things\n---\n\ncertain\n",
	})
	for run := 1; run <= 2; run++ {
		rep, err := Run(context.Background(), Options{MemoryDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if run == 2 && len(rep.Fixes) != 0 {
			idx, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
			t.Errorf("second run still fixes %+v; index:\n%s", rep.Fixes, idx)
		}
	}
}
