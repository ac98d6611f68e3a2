package host

import (
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/gate"
)

// resolveCodebot: codebot keeps, under $CODEBOT_HOME (default ~/.codebot),
// projects/<id>/ for each project, id being the project path with every run
// of non-alphanumeric characters replaced by one '-'; its transcripts
// <date>_<session id>.jsonl sit directly in that folder and its memory in
// memory/ below it. Its dream (seeds 000) counts the *.jsonl there by mtime,
// excluding the current session as *_<id>.jsonl, and takes the same
// .consolidate-lock.
func resolveCodebot(repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	base, from, err := agentHomeFrom(env, "CODEBOT_HOME", home, ".codebot")
	if err != nil {
		return Layout{}, err
	}
	project := filepath.Join(base, "projects", codebotProjectID(repoDir))
	l := Layout{
		MemoryDir:   filepath.Join(project, "memory"),
		SessionsDir: project,
		Notes:       "codebot: projects/<path with runs of non-alphanumerics as '-'>, transcripts in it, memory in memory/",
	}
	l.source("codebot home", base, from)
	l.source("memory dir", l.MemoryDir, "projects/<id>/memory")
	l.source("sessions dir", project, "projects/<id>")
	l.Files = []File{
		{Path: "MEMORY.md", Role: RoleIndex, Format: FormatMarkdown, Loaded: true, Writable: true, Limit: codebotIndexLimit().Summary()},
		{Path: "**/*.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
	}
	l.Sessions = &gate.Rule{
		Match: func(depth int, name string) (string, bool) {
			stem, ok := strings.CutSuffix(name, ".jsonl")
			return stem, ok && depth == 0
		},
		Descend: func(int, string) bool { return false },
	}
	l.SessionsCounted = "<date>_<session id>.jsonl directly in the project folder"
	l.Consolidator = &Consolidator{Name: "dream", Enabled: true, TakesLock: true,
		Detail: "codebot's own dream runs from its idle hook and shares .consolidate-lock with dream"}
	return l, nil
}

// codebotProjectID is the path with each run of characters other than ASCII
// letters and digits replaced by one '-'.
func codebotProjectID(path string) string {
	var b strings.Builder
	dash := false
	for _, r := range path {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return b.String()
}
