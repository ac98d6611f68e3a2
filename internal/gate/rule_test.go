package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountSessionsRule: a Rule's Match, Descend, Alias, Keep and Same
// each decide what counts.
func TestCountSessionsRule(t *testing.T) {
	root := buildTree(t, []file{
		newer("a.jsonl"), newer("b.jsonl"), newer("c.json"), newer("d.json"), newer("d.jsonl"),
		newer("sub/e.jsonl"), newer("keep/f.jsonl"), older("g.jsonl"),
	})
	// f's first line says it is not a session.
	os.WriteFile(filepath.Join(root, "keep", "f.jsonl"), []byte(`{"kind":"exec"}`+"\n"), 0o644)
	os.Chtimes(filepath.Join(root, "keep", "f.jsonl"), since.Add(1e9), since.Add(1e9))
	rule := &Rule{
		Match: func(depth int, name string) (string, bool) {
			stem, ok := strings.CutSuffix(name, ".jsonl")
			if !ok {
				stem, ok = strings.CutSuffix(name, ".json")
			}
			return strings.ToUpper(stem), ok
		},
		Descend: func(depth int, name string) bool { return name == "keep" },
		Alias: func(name string) string {
			if s, ok := strings.CutSuffix(name, ".json"); ok {
				return s + ".jsonl"
			}
			return ""
		},
		Keep: func(line []byte) bool { return !strings.Contains(string(line), "exec") },
		Same: func(id, current string) bool { return id == strings.ToUpper(current) },
	}
	ctx := context.Background()
	// a, b, c, d (once: d.json is shadowed by d.jsonl); not sub/ (not
	// descended), not keep/f (Keep), not g (older).
	if n, err := CountSessions(ctx, root, since, rule, ""); err != nil || n != 4 {
		t.Fatalf("count = %d, %v; want 4", n, err)
	}
	if n, _ := CountSessions(ctx, root, since, rule, "a"); n != 3 {
		t.Fatalf("current a not excluded through Same: %d", n)
	}
	// The nil rule is the historical one.
	if n, _ := CountSessions(ctx, root, since, nil, "a"); n != 4 {
		t.Fatalf("nil rule = %d, want 4 (b, d.jsonl, sub/e, keep/f)", n)
	}
}

func TestFirstLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.jsonl")
	long := strings.Repeat("y", 100<<10)
	os.WriteFile(p, []byte(long+"\r\nsecond\n"), 0o644)
	line, ok := FirstLine(p)
	if !ok || string(line) != long {
		t.Fatalf("first line: %d bytes, %v", len(line), ok)
	}
	os.Symlink(p, filepath.Join(dir, "link.jsonl"))
	if _, ok := FirstLine(filepath.Join(dir, "link.jsonl")); ok {
		t.Fatal("followed a symlink")
	}
}
