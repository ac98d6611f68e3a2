package mcpserver

import (
	"path"
	"strings"
	"testing"
)

// FuzzRelFromURI: whatever URI a client sends, a path that comes back is a
// clean relative path inside the memory dir with no hidden part.
func FuzzRelFromURI(f *testing.F) {
	s := &Server{opts: Options{}}
	s.opts.Base.MemoryDir = "/home/u/.claude/projects/-home-u-app/memory"
	for _, seed := range []string{
		"file:///home/u/.claude/projects/-home-u-app/memory/MEMORY.md",
		"file:///home/u/.claude/projects/-home-u-app/memory/../../../../etc/passwd",
		"file:///home/u/.claude/projects/-home-u-app/memory/%2e%2e/x",
		"file://localhost/home/u/.claude/projects/-home-u-app/memory/sub/笔记.md",
		"file:///home/u/.claude/projects/-home-u-app/memory/.consolidate-lock",
		"http://x/y", "", "file:", "file:///home/u/.claude/projects/-home-u-app/memoryX/a.md",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		rel, err := s.relFromURI(uri)
		if err != nil {
			return
		}
		if rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || strings.HasPrefix(rel, "..") {
			t.Fatalf("%q -> %q", uri, rel)
		}
		for _, part := range strings.Split(rel, "/") {
			if part == ".." || strings.HasPrefix(part, ".") {
				t.Fatalf("%q -> %q has a hidden or parent part", uri, rel)
			}
		}
	})
}
