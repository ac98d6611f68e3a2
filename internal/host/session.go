package host

import "strings"

// sessionVars lists, per host, the environment variables that carry the
// current session's id in the processes the agent spawns, most specific
// first. Hosts that export none (nanobot, codebot, dir) are absent.
var sessionVars = map[string][]string{
	"claude": {"CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID"},
	"codex":  {"CODEX_THREAD_ID", "CODEX_SESSION_ID"},
	"gemini": {"GEMINI_SESSION_ID"},
}

// CurrentSession returns the current session's id as far as the host's
// environment variables tell, or "" when they do not. It is best effort:
// the session gate uses it only to leave the running session out of its
// count. A value that could not be a file name stem is ignored.
func CurrentSession(host string, env func(string) (string, bool)) string {
	if env == nil {
		return ""
	}
	for _, v := range sessionVars[host] {
		id, ok := env(v)
		id = strings.TrimSpace(id)
		if ok && id != "" && !strings.ContainsAny(id, "/\\\x00") && id != "." && id != ".." {
			return id
		}
	}
	return ""
}
