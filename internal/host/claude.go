package host

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/fsutil"
)

// maxProjectName is the length past which Claude Code truncates a sanitized
// project directory name and appends a hash, to stay within file-system
// name limits.
const maxProjectName = 200

// resolveClaude: Claude Code keeps, under $CLAUDE_CONFIG_DIR (default
// ~/.claude), projects/<sanitized path>/<session-uuid>.jsonl for each session
// started in that directory, and its auto-memory in
// projects/<sanitized git root>/memory/. The memory is keyed by the canonical
// git root so that every worktree of a repository shares one memory, while
// transcripts stay keyed by the directory the session ran in.
func resolveClaude(repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	base, err := agentHome(env, "CLAUDE_CONFIG_DIR", home, ".claude")
	if err != nil {
		return Layout{}, err
	}
	projects := filepath.Join(base, "projects")
	sessions := claudeProjectDir(projects, repoDir)
	root := canonicalGitRoot(repoDir)
	memory := filepath.Join(claudeProjectDir(projects, root), "memory")
	notes := "Claude Code: transcripts in projects/<sanitized repo path>, auto-memory in projects/<sanitized git root>/memory"
	if v, ok := env("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"); ok && v != "" {
		memory = fsutil.ExpandHome(v, home)
		notes = "Claude Code: memory dir from CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, transcripts in projects/<sanitized repo path>"
	}
	if root != repoDir {
		notes += "; memory shared with the worktree's main checkout " + root
	}
	return Layout{MemoryDir: memory, SessionsDir: sessions, Notes: notes}, nil
}

// claudeProjectDir returns projects/<name> for path, following Claude Code's
// naming. A name over maxProjectName characters gets a hash suffix whose
// function depends on the JavaScript runtime Claude Code ran under, so an
// existing directory with the truncated prefix is preferred when exactly one
// exists; otherwise the Node (djb2) form is used.
func claudeProjectDir(projects, path string) string {
	name := sanitizeProjectName(path)
	if len(name) <= maxProjectName {
		return filepath.Join(projects, name)
	}
	prefix := name[:maxProjectName] + "-"
	if entries, err := os.ReadDir(projects); err == nil {
		var match string
		n := 0
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
				match = e.Name()
				n++
			}
		}
		if n == 1 {
			return filepath.Join(projects, match)
		}
	}
	return filepath.Join(projects, prefix+djb2Base36(path))
}

// sanitizeProjectName replaces every character that is not an ASCII letter
// or digit with '-'. Claude Code does this on a JavaScript string, whose
// characters are UTF-16 code units, so a character outside the Basic
// Multilingual Plane becomes two dashes; that is mirrored here so the names
// match byte for byte.
func sanitizeProjectName(path string) string {
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); {
		r, size := utf8.DecodeRuneInString(path[i:])
		i += size
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case utf16.RuneLen(r) == 2:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// djb2Base36 is the hash suffix Claude Code appends under Node: djb2 over
// UTF-16 code units in 32-bit signed arithmetic, absolute value, base 36.
func djb2Base36(s string) string {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = (h << 5) - h + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return strconv.FormatInt(abs, 36)
}

// canonicalGitRoot returns the main checkout of the git repository
// containing dir: for a linked worktree (a .git file pointing into
// <main>/.git/worktrees/<name>) that is <main>; for a plain checkout the
// directory holding .git; outside any repository dir itself.
func canonicalGitRoot(dir string) string {
	for d := dir; ; {
		gitPath := filepath.Join(d, ".git")
		info, err := os.Lstat(gitPath)
		if err == nil {
			if info.IsDir() {
				return d
			}
			if main, ok := worktreeMain(gitPath, d); ok {
				return main
			}
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// worktreeMain reads a .git file ("gitdir: <path>") and, when it points into
// a main repository's .git/worktrees/, returns that repository's checkout.
func worktreeMain(gitFile, dir string) (string, bool) {
	data, err := os.ReadFile(gitFile)
	if err != nil || len(data) > 4096 {
		return "", false
	}
	return parseGitFile(string(data), dir)
}

// parseGitFile is worktreeMain after the read: content is the .git file and
// dir the directory holding it.
func parseGitFile(content, dir string) (string, bool) {
	target, ok := strings.CutPrefix(strings.TrimSpace(content), "gitdir:")
	if !ok {
		return "", false
	}
	target = filepath.Clean(strings.TrimSpace(target))
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	worktrees := filepath.Dir(target) // <main>/.git/worktrees
	if filepath.Base(worktrees) != "worktrees" {
		return "", false // a submodule: its checkout is its own root
	}
	gitDir := filepath.Dir(worktrees)
	if filepath.Base(gitDir) != ".git" {
		return "", false // a bare repository has no main checkout
	}
	return filepath.Dir(gitDir), true
}
