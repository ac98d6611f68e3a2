package host

import "path/filepath"

// resolveCodebot: codebot's on-disk layout is not published. Its dream is
// modelled on Claude Code's and takes the memory and sessions dirs from the
// working directory, so the layout assumed is Claude Code's under codebot's
// own home: $CODEBOT_HOME (default ~/.codebot)/projects/<sanitized repo
// path>/ for transcripts and its memory/ subdirectory for memory. Notes says
// it is an assumption; --memory-dir and --sessions-dir override it.
func resolveCodebot(repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	base, err := agentHome(env, "CODEBOT_HOME", home, ".codebot")
	if err != nil {
		return Layout{}, err
	}
	project := claudeProjectDir(filepath.Join(base, "projects"), repoDir)
	return Layout{
		MemoryDir:   filepath.Join(project, "memory"),
		SessionsDir: project,
		Notes:       "codebot: layout assumed to mirror Claude Code's under ~/.codebot (unconfirmed); override with --memory-dir/--sessions-dir",
	}, nil
}
