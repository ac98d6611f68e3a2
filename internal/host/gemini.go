package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/gate"
)

// projectRootMarker is the file Gemini CLI writes in each per-project temp
// directory, holding the absolute project path that directory belongs to.
const projectRootMarker = ".project_root"

// geminiMemorySection is the heading of the part of the global GEMINI.md
// that Gemini CLI's save_memory tool appends to; the rest of that file is
// the user's own instructions.
const geminiMemorySection = "## Gemini Added Memories"

// resolveGemini: Gemini CLI keeps per-project state in
// ~/.gemini/tmp/<project id>/, with sessions in chats/ and the private
// project memory in memory/ (MEMORY.md; GEMINI.md in older versions). The
// project id is a short slug of the project's base name registered in
// ~/.gemini/projects.json (and claimed on disk by a .project_root marker);
// versions before the registry used the SHA-256 of the project path.
// $GEMINI_CLI_HOME replaces the home directory. All three are tried, in the
// order the CLI trusts them.
//
// Chats are session-<YYYY-MM-DDTHH-MM>-<first 8 chars of the session
// id>.jsonl (legacy .json), sub-agent chats live in chats/<parent id>/
// (packages/core/src/services/chatRecordingService.ts). The global tier,
// the "## Gemini Added Memories" section of ~/.gemini/GEMINI.md, is listed
// as a file writable only inside that section: ~/.gemini itself also holds
// oauth_creds.json and is never a memory folder.
func resolveGemini(repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	// GEMINI_CLI_HOME stands in for the home directory, not for .gemini.
	geminiHome, from := home, "default ~/.gemini"
	if v, ok := env("GEMINI_CLI_HOME"); ok && v != "" {
		geminiHome, from = fsutil.ExpandHome(v, home), "variable GEMINI_CLI_HOME"
	}
	if geminiHome == "" || !filepath.IsAbs(geminiHome) {
		return Layout{}, errors.New("home directory unknown and GEMINI_CLI_HOME not set")
	}
	base := filepath.Join(geminiHome, ".gemini")
	tmp := filepath.Join(base, "tmp")
	id, how := geminiProjectID(base, tmp, repoDir)
	dir := filepath.Join(tmp, id)
	l := Layout{
		MemoryDir:   filepath.Join(dir, "memory"),
		SessionsDir: filepath.Join(dir, "chats"),
		Notes:       "Gemini CLI: project id " + id + " (" + how + "); sessions in chats/, private project memory in memory/",
	}
	l.source("gemini home", base, from)
	l.source("memory dir", l.MemoryDir, "tmp/<project id>/memory, project id "+how)
	l.source("sessions dir", l.SessionsDir, "tmp/<project id>/chats")
	global := filepath.Join(base, "GEMINI.md")
	l.Files = []File{
		{Path: "MEMORY.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: "GEMINI.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: global, Role: RoleSection, Format: FormatSection, Loaded: true, Writable: true, Section: geminiMemorySection},
	}
	l.Assumptions = []string{"only the " + quote(geminiMemorySection) + " section of " + global + " is memory; the rest of that file and everything else in " + base + " (credentials included) is never written"}
	l.Sessions = geminiSessionRule()
	l.SessionsCounted = "top-level session-*.jsonl chats (a legacy .json counts once, not beside its .jsonl); sub-agent chats in chats/<parent id>/ are not sessions"
	return l, nil
}

// geminiSessionRule: top-level session-<timestamp>-<8 chars>.json(l); the
// current session is matched by the first 8 characters of its id.
func geminiSessionRule() *gate.Rule {
	return &gate.Rule{
		Match: func(depth int, name string) (string, bool) {
			if depth != 0 || !strings.HasPrefix(name, "session-") {
				return "", false
			}
			stem, ok := strings.CutSuffix(name, ".jsonl")
			if !ok {
				stem, ok = strings.CutSuffix(name, ".json")
			}
			i := strings.LastIndexByte(stem, '-')
			if !ok || i < 0 || len(stem)-i-1 != 8 {
				return "", false
			}
			return stem[i+1:], true
		},
		Alias: func(name string) string {
			if stem, ok := strings.CutSuffix(name, ".json"); ok {
				return stem + ".jsonl" // migrated: the .jsonl is the live copy
			}
			return ""
		},
		Descend: func(int, string) bool { return false },
		Same: func(short, current string) bool {
			if len(current) > 8 {
				current = current[:8]
			}
			return strings.EqualFold(short, current)
		},
	}
}

// geminiProjectID finds the temp directory name Gemini CLI uses for
// repoDir and says how it was found.
func geminiProjectID(base, tmp, repoDir string) (id, how string) {
	if data, err := os.ReadFile(filepath.Join(base, "projects.json")); err == nil {
		var reg struct {
			Projects map[string]string `json:"projects"`
		}
		if json.Unmarshal(data, &reg) == nil {
			if slug := reg.Projects[repoDir]; slug != "" && !strings.ContainsAny(slug, `/\`) && slug != "." && slug != ".." {
				return slug, "from projects.json"
			}
		}
	}
	if entries, err := os.ReadDir(tmp); err == nil {
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			owner, err := os.ReadFile(filepath.Join(tmp, e.Name(), projectRootMarker))
			if err == nil && filepath.Clean(strings.TrimSpace(string(owner))) == repoDir {
				return e.Name(), "from its " + projectRootMarker + " marker"
			}
		}
	}
	sum := sha256.Sum256([]byte(repoDir))
	legacy := hex.EncodeToString(sum[:])
	if info, err := os.Stat(filepath.Join(tmp, legacy)); err == nil && info.IsDir() {
		return legacy, "legacy SHA-256 of the path"
	}
	return geminiSlug(filepath.Base(repoDir)), "not registered yet; assumed the slug Gemini CLI would claim"
}

// geminiSlug mirrors how Gemini CLI names a new project: lower-case, runs of
// anything but a-z and 0-9 collapsed to one '-', trimmed, "project" if empty.
func geminiSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "project"
	}
	return s
}
