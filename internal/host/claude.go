package host

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/jsonc"
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
//
// The memory dir is moved as Claude Code 2.1.197 moves it (read from its
// cli.js: gm, DFd, hUi): CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, else the
// autoMemoryDirectory setting from policy ?? (folder trusted ? local ??
// project : none) ?? user settings — the first file that sets it decides,
// with one departure for the local settings (see claudeSettingsFile),
// and a value that is not an absolute path (or ~/ under the home) is
// ignored, leaving the default. Settings passed with --settings cannot be
// seen from here and are named in Assumptions. A memory dir where
// credentials live is refused later, whatever set it (dream.New).
func resolveClaude(repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	base, from, err := agentHomeFrom(env, "CLAUDE_CONFIG_DIR", home, ".claude")
	if err != nil {
		return Layout{}, err
	}
	projects := filepath.Join(base, "projects")
	sessions := claudeProjectDir(projects, repoDir)
	root := canonicalGitRoot(repoDir)
	l := Layout{SessionsDir: sessions}
	l.source("claude home", base, from)
	l.source("sessions dir", sessions, "projects/<sanitized "+repoDir+">")
	memBase, memFrom := projects, "default projects/<sanitized git root>/memory"
	if v, ok := env("CLAUDE_CODE_REMOTE_MEMORY_DIR"); ok && v != "" {
		memBase, memFrom = filepath.Join(v, "projects"), "variable CLAUDE_CODE_REMOTE_MEMORY_DIR, then projects/<sanitized git root>/memory"
	}
	memory := filepath.Join(claudeProjectDir(memBase, root), "memory")
	notes := "Claude Code: transcripts in projects/<sanitized repo path>, auto-memory in projects/<sanitized git root>/memory"
	settings := claudeSettingsFiles(base, repoDir)
	trust := claudeTrust(env, base, home, repoDir, root)
	if trust.trusted {
		l.source("trust record", trust.config, trust.why)
	}
	if v, ok := env("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"); ok && v != "" {
		if d, ok := claudeMemoryPath(v, false, home); ok {
			memory, memFrom = d, "variable CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"
			notes = "Claude Code: memory dir from CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, transcripts in projects/<sanitized repo path>"
		} else {
			l.Assumptions = append(l.Assumptions, "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="+v+" is not an absolute path: Claude Code ignores it")
		}
	} else if v, f, ok := claudeMemorySetting(settings, trust.trusted); ok {
		if d, ok := claudeMemoryPath(v, true, home); ok {
			memory = d
			memFrom = "setting autoMemoryDirectory in " + f.scope + " " + f.path
			if f.needsTrust {
				memFrom += " (followed: the folder is trusted)"
			}
			notes = "Claude Code: memory dir from autoMemoryDirectory in " + f.scope + " " + f.path + ", transcripts in projects/<sanitized repo path>"
		} else {
			l.Assumptions = append(l.Assumptions, fmt.Sprintf("autoMemoryDirectory %q in %s is not an absolute path or ~/ under the home: Claude Code ignores it and uses the default", v, f.path))
		}
	}
	if !trust.trusted {
		// What Claude does in a folder it does not trust yet: -p sessions
		// trust every folder; the interactive UI asks first and records
		// the answer (its dialog does not name autoMemoryDirectory).
		if v, f, ok := claudeMemorySetting(settings, true); ok && f.needsTrust {
			if d, ok := claudeMemoryPath(v, true, home); ok && d != memory {
				l.Elsewhere = append(l.Elsewhere, Source{What: "memory dir", Path: d,
					From: "autoMemoryDirectory in " + f.scope + " " + f.path + ", which Claude Code follows in `claude -p` sessions and, once you accept its trust dialog, in interactive ones; dream follows it once " + repoDir + " is trusted (" + trust.why + ")"})
			}
		}
	}
	if root != repoDir {
		notes += "; memory shared with the worktree's main checkout " + root
	}
	l.MemoryDir, l.Notes = memory, notes
	l.source("memory dir", memory, memFrom)
	for _, f := range settings {
		if f.read {
			l.source("settings file", f.path, f.scope)
		}
	}
	l.Assumptions = append(l.Assumptions, "settings given with claude --settings are not visible to dream")
	if off := claudeAutoMemoryOff(env, settings); off != "" {
		l.Assumptions = append(l.Assumptions, off)
	}
	l.Files = []File{
		{Path: "MEMORY.md", Role: RoleIndex, Format: FormatMarkdown, Loaded: true, Writable: true, Limit: claudeIndexLimit().Summary()},
		// Claude puts only MEMORY.md in its prompt; a topic file is read
		// with its Read tool when the index points the model at it.
		{Path: "**/*.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, OnDemand: true, Writable: true},
	}
	l.Sessions = claudeSessionRule()
	l.SessionsCounted = "top-level <uuid>.jsonl transcripts; agent-*.jsonl and <uuid>/subagents/ are sub-agents, not sessions"
	l.Consolidator = claudeConsolidator(settings)
	return l, nil
}

// claudeAutoMemoryOff says why Claude Code writes no auto-memory here (its
// variable, or autoMemoryEnabled = false in a settings file), or "".
func claudeAutoMemoryOff(env func(string) (string, bool), settings []claudeSettingsFile) string {
	if v, ok := env("CLAUDE_CODE_DISABLE_AUTO_MEMORY"); ok && v != "" && v != "0" && v != "false" {
		return "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set: Claude Code writes no auto-memory in this environment"
	}
	if v, file, ok := claudeSetting(settings, "autoMemoryEnabled"); ok {
		if on, ok := v.Bool(); ok && !on {
			return "autoMemoryEnabled is false in " + file + ": Claude Code writes no auto-memory"
		}
	}
	return ""
}

// claudeMemoryPath is Claude Code's check of a memory dir value (hUi in its
// cli.js): with tilde, "~/" expands to the home unless what follows climbs
// out of it; the cleaned path, trailing separators removed, must be
// absolute and at least three characters long. Anything else is ignored.
// (Claude also NFC-normalises the path; a path that is not NFC already is
// the one case dream would name differently.)
func claudeMemoryPath(v string, tilde bool, home string) (string, bool) {
	if v == "" || strings.ContainsRune(v, 0) {
		return "", false
	}
	if tilde && (strings.HasPrefix(v, "~/") || strings.HasPrefix(v, `~\`)) {
		rest := v[2:]
		clean := filepath.Clean(rest)
		if rest == "" || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.HasPrefix(clean, `..\`) || home == "" {
			return "", false
		}
		v = filepath.Join(home, rest)
	}
	p := strings.TrimRight(filepath.Clean(v), `/\`)
	if !filepath.IsAbs(p) || len(p) < 3 || strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return "", false
	}
	return p, true
}

// claudeTrustState is whether Claude Code trusts a folder outside -p, and
// where that was read.
type claudeTrustState struct {
	trusted bool
	// config is Claude's global config file (~/.claude.json).
	config string
	// why says which record or variable decided, or where a record would be.
	why string
}

// claudeTrust reads whether Claude Code trusts repoDir in an interactive
// session (Tdm in its cli.js): CLAUDE_CODE_SANDBOXED, or
// projects.<path>.hasTrustDialogAccepted in its global config for the
// canonical git root, repoDir or any folder above it. A `claude -p`
// session trusts every folder; the interactive UI asks, and records the
// answer there (except for the home directory, trusted for that session
// only).
func claudeTrust(env func(string) (string, bool), base, home, repoDir, root string) claudeTrustState {
	config := claudeGlobalConfig(env, base, home)
	st := claudeTrustState{config: config,
		why: "no projects.<path>.hasTrustDialogAccepted for it or a folder above it in " + config}
	if v, ok := env("CLAUDE_CODE_SANDBOXED"); ok && truthy(v) {
		st.trusted, st.why = true, "variable CLAUDE_CODE_SANDBOXED"
		return st
	}
	data, err := os.ReadFile(config)
	if err != nil || len(data) > 64<<20 {
		return st
	}
	v, _, err := jsonc.Parse(data)
	if err != nil {
		return st
	}
	projects := v.Get("projects")
	accepted := func(dir string) bool {
		on, ok := projects.Get(dir).Get("hasTrustDialogAccepted").Bool()
		return ok && on
	}
	for _, dir := range append([]string{root}, ancestors(repoDir)...) {
		if accepted(dir) {
			st.trusted, st.why = true, "projects."+strconv.Quote(dir)+".hasTrustDialogAccepted"
			return st
		}
	}
	return st
}

// ancestors is dir and every directory above it, nearest first.
func ancestors(dir string) []string {
	out := []string{dir}
	for d := dir; ; {
		parent := filepath.Dir(d)
		if parent == d {
			return out
		}
		out, d = append(out, parent), parent
	}
}

// claudeGlobalConfig is the file Claude Code keeps its global state in (w0
// in its cli.js): <claude home>/.config.json when it exists (an older
// layout), else .claude.json in $CLAUDE_CONFIG_DIR or the home.
func claudeGlobalConfig(env func(string) (string, bool), base, home string) string {
	if legacy := filepath.Join(base, ".config.json"); isFile(legacy) {
		return legacy
	}
	name := ".claude.json"
	if v, ok := env("CLAUDE_CODE_CUSTOM_OAUTH_URL"); ok && v != "" {
		name = ".claude-custom-oauth.json"
	}
	if v, ok := env("CLAUDE_CONFIG_DIR"); ok && v != "" {
		return filepath.Join(v, name)
	}
	return filepath.Join(home, name)
}

// truthy is how Claude Code reads a boolean variable.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// claudeSessionRule is Claude Code's own session gate: only top-level
// transcripts named by a session UUID.
func claudeSessionRule() *gate.Rule {
	return &gate.Rule{
		Match: func(depth int, name string) (string, bool) {
			stem, ok := strings.CutSuffix(name, ".jsonl")
			if !ok || depth != 0 || !isUUID(stem) {
				return "", false
			}
			return stem, true
		},
		Descend: func(int, string) bool { return false },
		Same:    strings.EqualFold,
	}
}

// isUUID reports whether s is a canonical 8-4-4-4-12 hex UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// claudeSettingsFile is one settings file Claude Code reads, in precedence
// order (first wins).
type claudeSettingsFile struct {
	path, scope string
	// needsTrust: dream reads autoMemoryDirectory from it only in a folder
	// Claude Code trusts: the project settings, which come with the
	// repository and so may come from anyone. Claude Code also skips the
	// local settings in an untrusted interactive session, but that session
	// never starts (its trust dialog exits unless accepted, and an accepted
	// one is recorded), so every session in a folder without a trust
	// record is a `claude -p` one, which trusts the folder and reads the
	// local settings: the user's own, uncommitted file. dream follows it
	// there too, so that it dreams the memory those sessions loaded.
	needsTrust bool
	root       *jsonc.Value
	read       bool
}

// claudeManagedSettings is the policy settings file; a variable so that
// tests can point it at a temp dir (and must restore it).
var claudeManagedSettings = func() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}

// claudeSettingsFiles reads the settings files Claude Code reads, highest
// precedence first: policy, local, project (both in the directory the
// session starts in), user.
func claudeSettingsFiles(base, repoDir string) []claudeSettingsFile {
	files := []claudeSettingsFile{
		{path: claudeManagedSettings(), scope: "policy settings"},
		{path: filepath.Join(repoDir, ".claude", "settings.local.json"), scope: "local settings"},
		{path: filepath.Join(repoDir, ".claude", "settings.json"), scope: "project settings", needsTrust: true},
		{path: filepath.Join(base, "settings.json"), scope: "user settings"},
	}
	for i := range files {
		data, err := os.ReadFile(files[i].path)
		if err != nil || len(data) > 4<<20 {
			continue
		}
		v, _, err := jsonc.Parse(data)
		if err != nil || v.Kind != jsonc.Object {
			continue
		}
		files[i].root, files[i].read = v, true
	}
	return files
}

// claudeSetting returns the first value of key in files and the file's
// scope and path.
func claudeSetting(files []claudeSettingsFile, key string) (*jsonc.Value, string, bool) {
	for _, f := range files {
		if v := f.root.Get(key); v != nil {
			return v, f.scope + " " + f.path, true
		}
	}
	return nil, "", false
}

// claudeMemorySetting is the autoMemoryDirectory Claude Code takes: the
// first file that sets it as a string, local and project settings only in
// a trusted folder. The value is checked by the caller (claudeMemoryPath):
// an unusable one still decides, as JavaScript's ?? does.
func claudeMemorySetting(files []claudeSettingsFile, trusted bool) (string, claudeSettingsFile, bool) {
	for _, f := range files {
		if f.needsTrust && !trusted {
			continue
		}
		if v, ok := f.root.Get("autoMemoryDirectory").Text(); ok {
			return v, f, true
		}
	}
	return "", claudeSettingsFile{}, false
}

// claudeConsolidator describes Claude Code's own autoDream, which takes the
// same .consolidate-lock dream does.
func claudeConsolidator(files []claudeSettingsFile) *Consolidator {
	c := &Consolidator{Name: "autoDream", Enabled: true, TakesLock: true,
		Detail: "autoDreamEnabled not set: Claude Code decides by its own default; it shares .consolidate-lock with dream"}
	if v, file, ok := claudeSetting(files, "autoDreamEnabled"); ok {
		if on, ok := v.Bool(); ok {
			c.Enabled = on
			c.Detail = fmt.Sprintf("autoDreamEnabled is %v in %s; it shares .consolidate-lock with dream", on, file)
		}
	}
	return c
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

// WorktreeRoot is the checkout holding dir: the nearest directory with a
// .git entry (a linked worktree's own root, not its main checkout), or dir
// itself outside any repository. Per-project agent settings
// (.claude/settings.json) live there.
func WorktreeRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
