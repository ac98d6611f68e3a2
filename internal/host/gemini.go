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
)

// projectRootMarker is the file Gemini CLI writes in each per-project temp
// directory, holding the absolute project path that directory belongs to.
const projectRootMarker = ".project_root"

// resolveGemini: Gemini CLI keeps per-project state in
// ~/.gemini/tmp/<project id>/, with sessions in chats/ and the private
// project memory in memory/. The project id is a short slug of the project's
// base name registered in ~/.gemini/projects.json (and claimed on disk by a
// .project_root marker); versions before the registry used the SHA-256 of
// the project path. $GEMINI_CLI_HOME replaces the home directory. All three are tried, in the order the CLI trusts them.
func resolveGemini(repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	// GEMINI_CLI_HOME stands in for the home directory, not for .gemini.
	geminiHome := home
	if v, ok := env("GEMINI_CLI_HOME"); ok && v != "" {
		geminiHome = fsutil.ExpandHome(v, home)
	}
	if geminiHome == "" || !filepath.IsAbs(geminiHome) {
		return Layout{}, errors.New("home directory unknown and GEMINI_CLI_HOME not set")
	}
	base := filepath.Join(geminiHome, ".gemini")
	tmp := filepath.Join(base, "tmp")
	id, how := geminiProjectID(base, tmp, repoDir)
	dir := filepath.Join(tmp, id)
	return Layout{
		MemoryDir:   filepath.Join(dir, "memory"),
		SessionsDir: filepath.Join(dir, "chats"),
		Notes:       "Gemini CLI: project id " + id + " (" + how + "); sessions in chats/, private project memory in memory/",
	}, nil
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
