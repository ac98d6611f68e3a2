package host

import "path/filepath"

// resolveDir is for a plain folder of notes with no agent behind it: the
// memory is <repo>/memory and there are no transcripts, so the session gate
// has nothing to count and only `dream run` (or min_sessions satisfied by a
// --sessions-dir) starts a dream.
func resolveDir(repoDir, _ string, _ func(string) (string, bool)) (Layout, error) {
	l := Layout{
		MemoryDir: filepath.Join(repoDir, "memory"),
		Notes:     "plain folder: memory in <repo>/memory, no transcripts",
		Files: []File{
			{Path: "MEMORY.md", Role: RoleIndex, Format: FormatMarkdown, Loaded: true, Writable: true},
			{Path: "**/*.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		},
	}
	l.source("memory dir", l.MemoryDir, "default <repo>/memory")
	return l, nil
}
