package tools

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/sandbox"
)

// snapshot lists every path under dir with its size, to prove a call left a
// directory alone.
func snapshot(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := make(map[string]int64)
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var size int64
		if info, err := d.Info(); err == nil && !d.IsDir() {
			size = info.Size()
		}
		out[p] = size
		return nil
	})
	return out
}

func sameSnapshot(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// FuzzToolInputs drives every tool with hostile inputs (names with any
// bytes, contents of any size and encoding, raw JSON that is not valid
// UTF-8) against a real sandbox: a repository, a staged memory dir, a
// sessions dir and a directory outside them all. Whatever the input:
//
//   - no call panics or outlives its deadline;
//   - nothing outside the staged memory dir changes, ever;
//   - a successful write or edit touched exactly one clean, local path that
//     passes the name checks, holds exactly what was asked, stays within the
//     size limit and adds no secret; no temporary file is left behind;
//   - a refused write or edit changes nothing at all.
func FuzzToolInputs(f *testing.F) {
	seeds := []struct {
		tool    uint8
		name    string
		content string
		size    uint16
	}{
		{4, "notes.md", "# Notes\n", 1},
		{4, "../outside/x.md", "x", 1},
		{4, "a\nb.md", "x", 1},
		{4, ".dream-tmp-1", "x", 1},
		{4, "topic.md/child.md", "x", 1},
		{4, "big.md", "0123456789abcdef", 600},
		{4, "k.md", "AKIAIOSFOD\nNN7EXAMPL2", 1},
		{5, "MEMORY.md", "Build", 1},
		{0, "MEMORY.md", "", 0},
		{1, "**/*", "", 0},
		{2, "needle", "", 0},
		{3, "", "", 0},
		{4, "bad\xff.md", "\xff\xfe", 3},
		{4, "/etc/passwd", "x", 1},
		{4, "sub/.consolidate-lock", "x", 1},
		{4, "项目.md", "# 构建\n\n运行 `make`。\n", 2},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.name, s.content, s.size)
	}
	f.Fuzz(func(t *testing.T, which uint8, name, content string, size uint16) {
		fx := newFixture(t, Limits{WriteMaxBytes: 4 << 10})
		writeFile(t, filepath.Join(fx.repo, "main.go"), "package main // needle\n")
		writeFile(t, filepath.Join(fx.sessions, "a.jsonl"), `{"t":"needle"}`+"\n")
		writeFile(t, filepath.Join(fx.staging, "MEMORY.md"), "- [Build](build.md) — how it builds\n")
		writeFile(t, filepath.Join(fx.outside, "keep.md"), "outside\n")
		body := strings.Repeat(content, int(size%2048))
		var raw []byte
		switch which % 7 {
		case 0:
			raw, _ = json.Marshal(map[string]any{"file_path": name})
		case 1:
			raw, _ = json.Marshal(map[string]any{"pattern": name})
		case 2:
			raw, _ = json.Marshal(map[string]any{"pattern": name, "path": fx.repo})
		case 3:
			raw, _ = json.Marshal(map[string]any{"path": name})
		case 4:
			raw, _ = json.Marshal(map[string]any{"file_path": name, "content": body})
		case 5:
			// Read first, as the model must, then edit.
			r, _ := json.Marshal(map[string]any{"file_path": filepath.Join(fx.display, "MEMORY.md")})
			if _, err := fx.tool(t, "read").Execute(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			raw, _ = json.Marshal(map[string]any{"file_path": "MEMORY.md", "old_string": name, "new_string": body})
		case 6:
			// Raw bytes, not re-encoded: whatever a provider passes through.
			raw = []byte(`{"file_path":"` + name + `","content":"` + body + `"}`)
			which = 4
		}
		tl := fx.set.Tools()[min(int(which%7), 5)]
		before := map[string]map[string]int64{
			"repo": snapshot(t, fx.repo), "outside": snapshot(t, fx.outside),
			"display": snapshot(t, fx.display), "sessions": snapshot(t, fx.sessions),
		}
		staged := snapshot(t, fx.staging)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done := make(chan struct{})
		var res Result
		var err error
		go func() {
			defer close(done)
			if err = tl.Validate(raw); err == nil {
				res, err = tl.Execute(ctx, raw)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %q did not return", tl.Name(), raw)
		}
		after := map[string]map[string]int64{
			"repo": snapshot(t, fx.repo), "outside": snapshot(t, fx.outside),
			"display": snapshot(t, fx.display), "sessions": snapshot(t, fx.sessions),
		}
		for k := range before {
			if !sameSnapshot(before[k], after[k]) {
				t.Fatalf("%s %q changed the %s directory", tl.Name(), raw, k)
			}
		}
		nowStaged := snapshot(t, fx.staging)
		for p := range nowStaged {
			if strings.HasPrefix(filepath.Base(p), fsutil.TempPrefix) {
				t.Fatalf("%s %q left the temporary file %s", tl.Name(), raw, p)
			}
		}
		if err != nil || res.Touched == "" {
			if !sameSnapshot(staged, nowStaged) {
				t.Fatalf("%s %q changed the memory dir without touching a file (err %v)", tl.Name(), raw, err)
			}
			return
		}
		rel := res.Touched
		if !filepath.IsLocal(filepath.FromSlash(rel)) || filepath.ToSlash(filepath.Clean(rel)) != rel {
			t.Fatalf("touched %q is not a clean local path", rel)
		}
		if err := sandbox.CheckName(rel); err != nil {
			t.Fatalf("touched %q passes no name check: %v", rel, err)
		}
		if err := sandbox.CheckSecretName(rel); err != nil {
			t.Fatalf("touched %q: %v", rel, err)
		}
		data, rerr := os.ReadFile(filepath.Join(fx.staging, filepath.FromSlash(rel)))
		if rerr != nil {
			t.Fatalf("touched %q but it cannot be read: %v", rel, rerr)
		}
		if len(data) > 4<<10 && tl.Name() == "write" {
			t.Fatalf("wrote %d bytes, over the limit", len(data))
		}
		if tl.Name() == "write" {
			var in writeInput
			if json.Unmarshal(raw, &in) == nil && in.Content != nil && string(data) != *in.Content {
				t.Fatalf("write landed %q, asked %q", data, *in.Content)
			}
		}
		old := ""
		if rel == "MEMORY.md" {
			old = "- [Build](build.md) — how it builds\n"
		}
		if err := sandbox.CheckSecretAdded(old, string(data)); err != nil {
			t.Fatalf("%s stored a secret: %v", tl.Name(), err)
		}
	})
}
