package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLs(t *testing.T) {
	f := newFixture(t, Limits{LsMax: 3})
	writeFile(t, filepath.Join(f.repo, "a.go"), "package a\n")
	writeFile(t, filepath.Join(f.repo, "sub", "b.go"), "package b\n")
	writeFile(t, filepath.Join(f.staging, "MEMORY.md"), "- [x](x.md)\n")
	if err := os.Symlink("a.go", filepath.Join(f.repo, "link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.repo, "z.txt"), "")
	mkdir(t, filepath.Join(f.sessions, "empty"))
	tests := []struct {
		name    string
		in      map[string]any
		golden  string
		errText []string
	}{
		{name: "repo default, capped", in: map[string]any{}, golden: "repo.txt"},
		{name: "memory by display path", in: map[string]any{"path": f.display}, golden: "memory.txt"},
		{name: "empty dir", in: map[string]any{"path": filepath.Join(f.sessions, "empty")}, golden: "empty.txt"},
		{name: "file", in: map[string]any{"path": "a.go"}, errText: []string{"is a file", "read"}},
		{name: "outside", in: map[string]any{"path": f.outside}, errText: []string{"must be inside"}},
		{name: "sibling prefix", in: map[string]any{"path": f.display + "-evil"}, errText: []string{"must be inside"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.call(t, "ls", tt.in)
			if tt.errText != nil {
				wantErr(t, err, tt.errText...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("ls", tt.golden), f.normalize(res.Content))
		})
	}
}
