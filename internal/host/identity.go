package host

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// SyncIdentity is the machine-independent name of the memory at memoryDir:
// it names the memory's branch on sync_remote and its etcd keys, so it must
// differ between two projects' memories (or one remote and one lock would be
// shared by all of them) and be the same on two machines holding the same
// memory (or they would never meet). An absolute path is neither: it holds
// the user's home, which differs between a laptop (/Users/ann) and a dev box
// (/home/ann). So the memory dir's path relative to home is what is hashed,
// and a Claude Code project name inside it (the project's absolute path with
// '/' turned into '-', which again holds the home) has that home replaced by
// "~" too: ~/.claude/projects/-home-ann-src-api/memory and
// ~/.claude/projects/-Users-ann-src-api/memory are one memory. A memory
// outside home keeps its absolute path (a shared mount, seen at one path).
// Where machines differ in more than their home, sync_branch names the
// memory by hand.
func SyncIdentity(memoryDir, home string) string {
	dir := resolvedPath(memoryDir)
	key := "abs:" + filepath.ToSlash(dir)
	if home != "" {
		home = resolvedPath(home)
		if rel, err := filepath.Rel(home, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			homeSlug := ClaudeProjectName(home)
			parts := strings.Split(filepath.ToSlash(rel), "/")
			for i, p := range parts {
				if p == homeSlug || strings.HasPrefix(p, homeSlug+"-") {
					parts[i] = "~" + strings.TrimPrefix(p, homeSlug)
				}
			}
			key = "home:" + strings.Join(parts, "/")
		}
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// resolvedPath is p cleaned and, when it exists, with symlinks resolved, so
// that one memory reached through a link has one identity.
func resolvedPath(p string) string {
	p = filepath.Clean(p)
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
