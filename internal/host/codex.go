package host

import "path/filepath"

// resolveCodex: Codex CLI keeps everything under $CODEX_HOME (default
// ~/.codex). Transcripts are global, not per project, bucketed by date:
// sessions/YYYY/MM/DD/rollout-<timestamp>-<id>.jsonl, which the recursive
// session scan counts as they are. Codex's memories feature writes to
// memories/ under the same home (memory_summary.md, MEMORY.md); that folder
// is the memory dir, shared by every project like the transcripts.
func resolveCodex(_, home string, env func(string) (string, bool)) (Layout, error) {
	base, err := agentHome(env, "CODEX_HOME", home, ".codex")
	if err != nil {
		return Layout{}, err
	}
	return Layout{
		MemoryDir:   filepath.Join(base, "memories"),
		SessionsDir: filepath.Join(base, "sessions"),
		Notes:       "Codex CLI: global transcripts in sessions/YYYY/MM/DD, memory in the global memories/ folder (not per repository)",
	}, nil
}
