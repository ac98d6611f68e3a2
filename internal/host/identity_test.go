package host

import (
	"path/filepath"
	"testing"
)

func TestSyncIdentity(t *testing.T) {
	root := t.TempDir()
	id := func(mem, home string) string {
		return SyncIdentity(filepath.Join(root, mem), filepath.Join(root, home))
	}
	same := []struct{ name, memA, homeA, memB, homeB string }{
		{"plain dir under two homes", "home/ann/notes/api", "home/ann", "Users/ann/notes/api", "Users/ann"},
		{"claude project slug holding the home", "home/ann/.claude/projects/-" + slug(root) + "-home-ann-src-api/memory", "home/ann",
			"Users/bo/.claude/projects/-" + slug(root) + "-Users-bo-src-api/memory", "Users/bo"},
		{"codex global", "home/ann/.codex/memories", "home/ann", "home/bo/.codex/memories", "home/bo"},
		{"trailing slash", "home/ann/notes/api/", "home/ann", "home/ann/notes/api", "home/ann"},
	}
	for _, c := range same {
		if a, b := id(c.memA, c.homeA), id(c.memB, c.homeB); a != b {
			t.Errorf("%s: %s and %s are one memory, got %s and %s", c.name, c.memA, c.memB, a, b)
		}
	}
	differ := []struct{ name, memA, memB string }{
		{"two projects", "home/ann/notes/api", "home/ann/notes/web"},
		{"two claude projects", "home/ann/.claude/projects/-x-home-ann-src-api/memory", "home/ann/.claude/projects/-x-home-ann-src-web/memory"},
		{"outside home", "srv/a/memory", "srv/b/memory"},
	}
	for _, c := range differ {
		if id(c.memA, "home/ann") == id(c.memB, "home/ann") {
			t.Errorf("%s: %s and %s share an identity", c.name, c.memA, c.memB)
		}
	}
}

// slug is Claude Code's project name of a path, without its leading '-'.
func slug(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b[1:])
}
