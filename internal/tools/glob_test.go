package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	f := newFixture(t, Limits{GlobMax: 3})
	files := map[string]string{
		".gitignore":           "node_modules/\n*.log\n/build\n",
		"main.go":              "",
		"app.log":              "",
		"docs/guide.md":        "",
		"docs/api.md":          "",
		"docs/.gitignore":      "draft.md\n",
		"docs/draft.md":        "",
		"node_modules/x/y.md":  "",
		"build/out.md":         "",
		"pkg/build/keep.md":    "",
		".git/config":          "",
		".git/info.md":         "",
		"deep/a/b/c/README.md": "",
	}
	now := time.Now()
	for name, content := range files {
		writeFile(t, filepath.Join(f.repo, filepath.FromSlash(name)), content)
	}
	// Distinct mtimes give a known newest-first order.
	order := []string{"docs/guide.md", "pkg/build/keep.md", "docs/api.md", "deep/a/b/c/README.md"}
	for k, name := range order {
		mt := now.Add(-time.Duration(k) * time.Hour)
		if err := os.Chtimes(filepath.Join(f.repo, filepath.FromSlash(name)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(f.sessions, "a.jsonl"), "")
	writeFile(t, filepath.Join(f.sessions, "b.jsonl"), "")
	old := now.Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(f.sessions, "b.jsonl"), old, old); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      map[string]any
		want    []string // relative to base, in order; nil with errText
		more    string
		errText []string
	}{
		{name: "md newest first, capped, gitignore", in: map[string]any{"pattern": "**/*.md"},
			want: []string{"repo/docs/guide.md", "repo/pkg/build/keep.md", "repo/docs/api.md"}, more: "1 more files not shown (4 in total)"},
		{name: "subdir keeps root gitignore", in: map[string]any{"pattern": "*.md", "path": "docs"},
			want: []string{"repo/docs/guide.md", "repo/docs/api.md"}},
		{name: "explicitly ignored dir is searched", in: map[string]any{"pattern": "**/*.md", "path": "node_modules"},
			want: []string{"repo/node_modules/x/y.md"}},
		{name: "top level only", in: map[string]any{"pattern": "*.go"}, want: []string{"repo/main.go"}},
		{name: "absolute pattern in sessions", in: map[string]any{"pattern": filepath.Join(f.sessions, "*.jsonl")},
			want: []string{"sessions/a.jsonl", "sessions/b.jsonl"}},
		{name: "no match", in: map[string]any{"pattern": "*.rs"}, want: []string{}},
		{name: "bad pattern", in: map[string]any{"pattern": "[a"}, errText: []string{"not a valid glob"}},
		{name: "outside", in: map[string]any{"pattern": "*", "path": f.outside}, errText: []string{"must be inside"}},
		{name: "absolute outside", in: map[string]any{"pattern": filepath.Join(f.outside, "*")}, errText: []string{"must be inside"}},
		{name: "file as path", in: map[string]any{"pattern": "*", "path": "main.go"}, errText: []string{"not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.call(t, "glob", tt.in)
			if tt.errText != nil {
				wantErr(t, err, tt.errText...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(res.Content), "\n") {
				if strings.HasPrefix(line, f.base) {
					got = append(got, filepath.ToSlash(strings.TrimPrefix(line, f.base+string(filepath.Separator))))
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("glob = %v, want %v\n%s", got, tt.want, res.Content)
			}
			if tt.more != "" && !strings.Contains(res.Content, tt.more) {
				t.Errorf("missing %q in\n%s", tt.more, res.Content)
			}
			if len(tt.want) == 0 && !strings.Contains(res.Content, "No files match") {
				t.Errorf("empty result should say so: %q", res.Content)
			}
		})
	}
}
