package offline

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var testNow = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// runOn writes files into a fresh memory dir, runs the engine with the
// Claude Code layout and returns the report and the files afterwards.
func runOn(t *testing.T, files map[string]string, o Options) (Report, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o.MemoryDir = dir
	if o.Now.IsZero() {
		o.Now = testNow
	}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return rep, out
}

func TestEngineSmoke(t *testing.T) {
	rep, out := runOn(t, map[string]string{
		"MEMORY.md": "# Memory\n\n- [Build](build.md) — how it builds\n",
		"build.md":  "---\nname: build\ndescription: build notes\n---\n\n## 2026-11-20\n\n- Yesterday we moved CI to `make ci`.\n- Deploys run from main after review.\n- Deploys run from main after review.\n\n1. run the checks\n2. bump\n3. run the checks\n",
		"ops.md":    "# Ops\n\nThe Today screen lives in src/screens/Today.tsx.\n",
	}, Options{Layout: LayoutFor("")})
	t.Logf("%+v", rep)
	for k, v := range out {
		t.Logf("== %s\n%s", k, v)
	}
}
