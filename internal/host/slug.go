package host

// ClaudeProjectName is the directory name Claude Code gives the project at
// path under ~/.claude/projects (before any length-limiting hash suffix):
// every character but ASCII letters and digits becomes '-'.
func ClaudeProjectName(path string) string { return sanitizeProjectName(path) }
