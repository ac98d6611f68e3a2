package host

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// workspaceIDPattern is the shape of nanobot's workspace identity marker.
var workspaceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// resolveNanobot: nanobot's home is $NANOBOT_HOME (default ~/.nanobot) and
// its default workspace <home>/workspace, with long-term memory in
// workspace/memory/ (MEMORY.md, history.jsonl). Sessions have moved across
// versions: current ones keep them outside the workspace in
// <home>/sessions/<workspace id>/ (the id is in
// workspace/.nanobot/workspace-id), earlier ones in workspace/sessions/, the
// oldest in <home>/sessions/. The first that exists wins. A workspace moved
// elsewhere in nanobot's config.json is not read; pass --memory-dir then.
func resolveNanobot(_, home string, env func(string) (string, bool)) (Layout, error) {
	base, err := agentHome(env, "NANOBOT_HOME", home, ".nanobot")
	if err != nil {
		return Layout{}, err
	}
	workspace := filepath.Join(base, "workspace")
	l := Layout{MemoryDir: filepath.Join(workspace, "memory")}
	if data, err := os.ReadFile(filepath.Join(workspace, ".nanobot", "workspace-id")); err == nil {
		id := strings.TrimSpace(string(data))
		dir := filepath.Join(base, "sessions", id)
		if workspaceIDPattern.MatchString(id) && isDir(dir) {
			l.SessionsDir = dir
			l.Notes = "nanobot: default workspace; sessions in the workspace's namespace " + id
			return l, nil
		}
	}
	if dir := filepath.Join(workspace, "sessions"); isDir(dir) {
		l.SessionsDir = dir
		l.Notes = "nanobot: default workspace; sessions inside it (pre-namespace layout)"
		return l, nil
	}
	l.SessionsDir = filepath.Join(base, "sessions")
	l.Notes = "nanobot: default workspace; sessions in the global sessions dir"
	return l, nil
}

// isDir reports whether path is an existing directory.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
