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
	"github.com/dreamkit/dream/internal/jsonc"
)

// projectRootMarker is the file Gemini CLI writes in each per-project temp
// directory, holding the absolute project path that directory belongs to.
const projectRootMarker = ".project_root"

// geminiMemorySection is the heading of the part of the global GEMINI.md
// that the save_memory tool of Gemini CLI before 0.40 appends to; the
// rest of that file is the user's own instructions.
const geminiMemorySection = "## Gemini Added Memories"

// geminiV2 is the first Gemini CLI version whose memory is "v2": no
// save_memory tool, the agent edits the memory files directly, a private
// MEMORY.md index per project. 0.40 to 0.43 have it behind
// experimental.memoryV2 (on by default); 0.44 removed the old way.
var geminiV2, geminiV2Only = [3]int{0, 40, 0}, [3]int{0, 44, 0}

// resolveGemini: Gemini CLI keeps per-project state in
// ~/.gemini/tmp/<project id>/, with sessions in chats/ and the private
// project memory in memory/. The project id is a short slug of the
// project's base name registered in ~/.gemini/projects.json (and claimed
// on disk by a .project_root marker); versions before the registry used
// the SHA-256 of the project path. $GEMINI_CLI_HOME replaces the home
// directory. All three are tried, in the order the CLI trusts them.
//
// Chats are session-<YYYY-MM-DDTHH-MM>-<first 8 chars of the session
// id>.jsonl (legacy .json), sub-agent chats live in chats/<parent id>/
// (packages/core/src/services/chatRecordingService.ts).
//
// What is memory depends on the version installed (read from the package
// on PATH, see geminiInstalled): geminiV2Layout, verified by running
// 0.61.0, or geminiLegacyLayout, read from the source of 0.39. ~/.gemini
// itself also holds oauth_creds.json and is never a memory folder: only
// its GEMINI.md is ever listed.
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
	version, pkg := geminiInstalled(env)
	v, ok := parseVersion(version)
	switch {
	case !ok:
		l.Assumptions = append(l.Assumptions, "no Gemini CLI found on PATH: assumed the memory layout of the versions from 0.44 on")
		geminiV2Layout(&l, base)
	case !versionBelow(v, geminiV2Only):
		geminiV2Layout(&l, base)
	case !versionBelow(v, geminiV2) && geminiMemoryV2Setting(base):
		geminiV2Layout(&l, base)
	default:
		geminiLegacyLayout(&l, base)
	}
	if ok {
		l.source("gemini version", pkg, version)
	}
	l.Sessions = geminiSessionRule()
	l.SessionsCounted = "top-level session-*.jsonl chats (a legacy .json counts once, not beside its .jsonl); sub-agent chats in chats/<parent id>/ are not sessions"
	return l, nil
}

// geminiV2Layout is the memory of Gemini CLI 0.44 and later (0.40 on with
// experimental.memoryV2, the default), as 0.61.0 was seen to load it: the
// private project index memory/MEMORY.md in every prompt, or, while there
// is none, the legacy memory/GEMINI.md instead; the sibling notes the
// index points at are read on demand; the whole ~/.gemini/GEMINI.md is the
// agent's "Global Personal Memory", in every prompt and edited directly.
func geminiV2Layout(l *Layout, base string) {
	index := "MEMORY.md"
	if !isFile(filepath.Join(l.MemoryDir, index)) && isFile(filepath.Join(l.MemoryDir, "GEMINI.md")) {
		index = "GEMINI.md"
	}
	global := filepath.Join(base, "GEMINI.md")
	l.Files = []File{
		{Path: index, Role: RoleIndex, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: "*.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, OnDemand: true, Writable: true},
		{Path: global, Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
	}
	l.Notes += "; memory v2: " + index + " is the index in every session, the notes beside it are read when needed, " + global + " is global memory"
	l.Assumptions = append(l.Assumptions,
		"memory/GEMINI.md is loaded only while memory/MEMORY.md does not exist; nothing in "+base+" but GEMINI.md (credentials included) is ever written",
		global+" is loaded with every model, but only the prompt of Gemini 3 models (the default) tells the agent it is its global memory")
}

// geminiLegacyLayout is the memory of Gemini CLI before 0.40 (and 0.40 to
// 0.43 with experimental.memoryV2 off), read from its source, not run:
// memory/GEMINI.md, and the "## Gemini Added Memories" section the
// save_memory tool appends to ~/.gemini/GEMINI.md, writable only inside
// that section.
func geminiLegacyLayout(l *Layout, base string) {
	global := filepath.Join(base, "GEMINI.md")
	l.Files = []File{
		{Path: "GEMINI.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: global, Role: RoleSection, Format: FormatSection, Loaded: true, Writable: true, Section: geminiMemorySection},
	}
	l.Notes += "; save_memory layout of the versions before 0.40 (read from their source, not verified by running one)"
	l.Assumptions = append(l.Assumptions, "only the "+quote(geminiMemorySection)+" section of "+global+" is memory; the rest of that file and everything else in "+base+" (credentials included) is never written")
}

// geminiInstalled finds the Gemini CLI on env's PATH and reads its version
// from the package.json of the npm package the command belongs to
// (running `gemini --version` would cost a Node start-up in every hook).
// It returns "" when there is no gemini on PATH or no package above it.
func geminiInstalled(env func(string) (string, bool)) (version, pkg string) {
	path, _ := env("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		bin, err := filepath.EvalSymlinks(filepath.Join(dir, "gemini"))
		if err != nil || !isFile(bin) {
			continue
		}
		for d := filepath.Dir(bin); d != filepath.Dir(d); d = filepath.Dir(d) {
			data, err := os.ReadFile(filepath.Join(d, "package.json"))
			if err != nil {
				continue
			}
			var m struct{ Name, Version string }
			if json.Unmarshal(data, &m) == nil && m.Name == "@google/gemini-cli" {
				return m.Version, filepath.Join(d, "package.json")
			}
			break // another package's manifest: this gemini is not the npm one
		}
		return "", ""
	}
	return "", ""
}

// geminiMemoryV2Setting reads experimental.memoryV2 from the user's
// settings.json; it defaults to on.
func geminiMemoryV2Setting(base string) bool {
	data, err := os.ReadFile(filepath.Join(base, "settings.json"))
	if err != nil || len(data) > 4<<20 {
		return true
	}
	root, _, err := jsonc.Parse(data)
	if err != nil {
		return true
	}
	on, ok := root.Get("experimental").Get("memoryV2").Bool()
	return !ok || on
}

// parseVersion reads "major.minor.patch" with anything after the patch
// number (a pre-release tag) ignored.
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n := 0
		digits := 0
		for digits < len(p) && p[digits] >= '0' && p[digits] <= '9' && digits < 9 {
			n = n*10 + int(p[digits]-'0')
			digits++
		}
		if digits == 0 || i < 2 && digits != len(p) {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func versionBelow(v, w [3]int) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
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
