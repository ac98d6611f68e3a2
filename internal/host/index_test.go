package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexLimitOf: the registry says which agents load an index with a
// limit; with no agent named there is none of the registry's own
// (indexcount.Of combines them).
func TestIndexLimitOf(t *testing.T) {
	for name, want := range map[string]bool{"claude": true, "codebot": true, "codex": false, "gemini": false, "nanobot": false, "dir": false, "nope": false, "": false} {
		if l, ok := IndexLimitOf(name); ok != want || ok && (l.MaxLines != 200 || l.Agent == "" || l.Source == "" || l.Rule == "" || l.Unit == "") {
			t.Errorf("IndexLimitOf(%q) = %+v, %v; want a limit: %v", name, l, ok, want)
		}
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
