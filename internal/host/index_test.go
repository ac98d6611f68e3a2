package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexLimitCount: each agent's index counted as that agent counts it.
// Claude Code 2.1.197 drops front matter and HTML comments, trims (a BOM
// and the blank lines at either end too), splits on newlines and counts
// blank lines in between; codebot counts the file as written, up to its
// last line with anything on it. (Issue 28: the engine counted non-blank
// lines only, so a 201-line index passed for 197.)
func TestIndexLimitCount(t *testing.T) {
	lines201 := "# Index\n\n" + strings.Repeat("- [T](t.md) — hook\n", 197) + "\n- [Last](last.md) — the 201st line\n"
	for _, tt := range []struct {
		name                   string
		src                    string
		claudeLines, rawLines  int
		claudeBytes, rawBytes  int
		claudeFits, strictFits bool
	}{
		{"empty", "", 0, 0, 0, 0, true, true},
		{"blank lines inside count", "a\n\n\nb\n\n", 4, 4, 5, 7, true, true},
		{"front matter", "---\nname: x\n---\n\n# H\n", 1, 5, 3, 21, true, true},
		{"unclosed front matter is text", "---\nname: x\n", 2, 2, 11, 12, true, true},
		{"comments", "<!-- a\nb -->\n# H\n<!-- c -->\nx\n", 3, 5, 6, 30, true, true},
		{"bom and crlf", "\ufeffa\r\nb\r\n\r\n", 2, 2, 4, 11, true, true},
		{"only space", "   \n\t\n", 0, 0, 0, 6, true, true},
		{"201 lines", lines201, 201, 201, len(lines201) - 1, len(lines201), false, false},
		{"200 lines after front matter", "---\nname: index\n---\n" + strings.Repeat("- [T](t.md)\n", 200), 200, 203, 200*12 - 1, 20 + 200*12, true, false},
		{"over 25,000 bytes", strings.Repeat(strings.Repeat("x", 199)+"\n", 126), 126, 126, 126*200 - 1, 126 * 200, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			claude, codebot := claudeIndexLimit(), codebotIndexLimit()
			strict, ok := IndexLimitOf("")
			if !ok {
				t.Fatal("no limit for an unnamed agent")
			}
			if l, b := claude.Count([]byte(tt.src)); l != tt.claudeLines || b != tt.claudeBytes || claude.Fits(l, b) != tt.claudeFits {
				t.Errorf("Claude Code: %d lines %d bytes fits %v; want %d %d %v", l, b, claude.Fits(l, b), tt.claudeLines, tt.claudeBytes, tt.claudeFits)
			}
			if l, b := codebot.Count([]byte(tt.src)); l != tt.rawLines || b != tt.rawBytes {
				t.Errorf("codebot: %d lines %d bytes; want %d %d", l, b, tt.rawLines, tt.rawBytes)
			}
			l, b := strict.Count([]byte(tt.src))
			if l != max(tt.claudeLines, tt.rawLines) || b != max(tt.claudeBytes, tt.rawBytes) || strict.Fits(l, b) != tt.strictFits {
				t.Errorf("unnamed: %d lines %d bytes fits %v; want the larger counts and fits %v", l, b, strict.Fits(l, b), tt.strictFits)
			}
		})
	}
}

// TestIndexLimitOf: the registry says which agents load an index with a
// limit, and an unnamed agent's limit names every rule it combines.
func TestIndexLimitOf(t *testing.T) {
	for name, want := range map[string]bool{"claude": true, "codebot": true, "codex": false, "gemini": false, "nanobot": false, "dir": false, "nope": false} {
		if l, ok := IndexLimitOf(name); ok != want || ok && (l.MaxLines != 200 || l.Agent == "" || l.Source == "" || l.Rule == "") {
			t.Errorf("IndexLimitOf(%q) = %+v, %v; want a limit: %v", name, l, ok, want)
		}
	}
	l, _ := IndexLimitOf("")
	for _, want := range []string{"Claude Code 2.1.197", "codebot"} {
		if !strings.Contains(l.Agent, want) || !strings.Contains(l.Rule, want) || !strings.Contains(l.Source, want) {
			t.Errorf("the unnamed limit does not name %s: %+v", want, l)
		}
	}
	if l.MaxLines != 200 || l.MaxBytes != 25000 {
		t.Errorf("unnamed limit %d lines %d bytes, want the smaller of each: 200, 25000", l.MaxLines, l.MaxBytes)
	}
}

// TestRecognize: a memory dir given without --host names its agent by the
// bookkeeping only that agent keeps beside its memory: nanobot's log
// (history.jsonl, or the older HISTORY.md) in its workspace's memory/, or
// the workspace itself; Codex's generated files. Anything else (a Claude
// Code memory, an editor's .cursor folder, a log with no memory beside
// it) names no agent. (Issue 28: nanobot's MEMORY.md was taken for an
// index and got a pointer to HISTORY.md.)
func TestRecognize(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files []string // a trailing "/" is a folder
		host  string   // "" when none is recognised
		mark  string
		// writable and readOnly are files the recognised layout must
		// allow and refuse.
		writable, readOnly []string
	}{
		{"nanobot memory/ with HISTORY.md", []string{"MEMORY.md", "HISTORY.md"}, "nanobot", "HISTORY.md", []string{"MEMORY.md"}, []string{"HISTORY.md", "notes.md"}},
		{"nanobot memory/ with history.jsonl", []string{"MEMORY.md", "history.jsonl", ".cursor"}, "nanobot", "history.jsonl", []string{"MEMORY.md"}, []string{"history.jsonl", ".cursor"}},
		{"nanobot workspace", []string{"memory/MEMORY.md", "memory/history.jsonl", "SOUL.md"}, "nanobot", "memory/history.jsonl", []string{"memory/MEMORY.md", "SOUL.md"}, []string{"memory/history.jsonl"}},
		{"codex memories", []string{"MEMORY.md", "memory_summary.md", "raw_memories.md", "rollout_summaries/"}, "codex", "raw_memories.md", []string{"MEMORY.md"}, []string{"raw_memories.md"}},
		{"claude memory", []string{"MEMORY.md", "user_role.md", "feedback_testing.md"}, "", "", nil, nil},
		{"an editor's .cursor folder", []string{"MEMORY.md", ".cursor/"}, "", "", nil, nil},
		{"a log with no memory", []string{"HISTORY.md", "notes.md"}, "", "", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if strings.HasSuffix(f, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, ok := Recognize(dir)
			if ok != (tt.host != "") || l.Host != tt.host {
				t.Fatalf("Recognize = %q %v, want %q", l.Host, ok, tt.host)
			}
			if !ok {
				return
			}
			if l.MemoryDir != dir || !strings.Contains(l.Notes, tt.mark) {
				t.Errorf("layout %s %q, want dir %s and a note naming %s", l.MemoryDir, l.Notes, dir, tt.mark)
			}
			for _, f := range l.Files {
				if f.Role == RoleIndex {
					t.Errorf("%s: %s has an index, %s", tt.host, f.Path, f.Role)
				}
			}
			for _, rel := range tt.writable {
				if f, ok := l.FileFor(rel); !ok || !f.Writable {
					t.Errorf("%s is not writable in the recognised layout: %+v %v", rel, f, ok)
				}
			}
			for _, rel := range tt.readOnly {
				if f, ok := l.FileFor(rel); ok && f.Writable {
					t.Errorf("%s is writable in the recognised layout: %+v", rel, f)
				}
			}
		})
	}
}
