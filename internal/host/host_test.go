package host

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// mkdir creates path (and parents) and returns it.
func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func write(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	repo := filepath.Join(tmp, "src", "my_app.v2")
	mkdir(t, repo)
	repoKey := sanitizeProjectName(repo)

	// A linked worktree of repo, as `git worktree add` lays it out.
	wt := filepath.Join(tmp, "src", "wt")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	mkdir(t, filepath.Join(repo, ".git", "worktrees", "wt"))

	tests := []struct {
		name        string
		host        string
		repo        string
		env         map[string]string
		setup       func(t *testing.T)
		wantMemory  string
		wantSession string
		wantNotes   string // substring
	}{
		{
			name:        "claude default",
			host:        "claude",
			repo:        repo,
			wantMemory:  filepath.Join(home, ".claude", "projects", repoKey, "memory"),
			wantSession: filepath.Join(home, ".claude", "projects", repoKey),
			wantNotes:   "Claude Code",
		},
		{
			name:        "claude config dir",
			host:        "claude",
			repo:        repo,
			env:         map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(tmp, "cc")},
			wantMemory:  filepath.Join(tmp, "cc", "projects", repoKey, "memory"),
			wantSession: filepath.Join(tmp, "cc", "projects", repoKey),
		},
		{
			name:        "claude memory override",
			host:        "claude",
			repo:        repo,
			env:         map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": filepath.Join(home, "mem")},
			wantMemory:  filepath.Join(home, "mem"),
			wantSession: filepath.Join(home, ".claude", "projects", repoKey),
			wantNotes:   "OVERRIDE",
		},
		{
			name:        "claude worktree shares the main checkout's memory",
			host:        "claude",
			repo:        wt,
			wantMemory:  filepath.Join(home, ".claude", "projects", repoKey, "memory"),
			wantSession: filepath.Join(home, ".claude", "projects", sanitizeProjectName(wt)),
			wantNotes:   "worktree",
		},
		{
			name:        "codex default",
			host:        "codex",
			wantMemory:  filepath.Join(home, ".codex", "memories"),
			wantSession: filepath.Join(home, ".codex", "sessions"),
			wantNotes:   "not per repository",
		},
		{
			name:        "codex home",
			host:        "codex",
			env:         map[string]string{"CODEX_HOME": filepath.Join(tmp, "cx")},
			wantMemory:  filepath.Join(tmp, "cx", "memories"),
			wantSession: filepath.Join(tmp, "cx", "sessions"),
		},
		{
			name:        "codex relative home ignored",
			host:        "codex",
			env:         map[string]string{"CODEX_HOME": "rel"},
			wantMemory:  filepath.Join(home, ".codex", "memories"),
			wantSession: filepath.Join(home, ".codex", "sessions"),
		},
		{
			name:        "gemini unregistered project gets the slug",
			host:        "gemini",
			repo:        repo,
			wantMemory:  filepath.Join(home, ".gemini", "tmp", "my-app-v2", "memory"),
			wantSession: filepath.Join(home, ".gemini", "tmp", "my-app-v2", "chats"),
			wantNotes:   "assumed",
		},
		{
			name: "gemini registry",
			host: "gemini",
			repo: repo,
			setup: func(t *testing.T) {
				write(t, filepath.Join(home, ".gemini", "projects.json"), `{"projects": {"`+repo+`": "my-app-v2-1"}}`)
			},
			wantMemory:  filepath.Join(home, ".gemini", "tmp", "my-app-v2-1", "memory"),
			wantSession: filepath.Join(home, ".gemini", "tmp", "my-app-v2-1", "chats"),
			wantNotes:   "projects.json",
		},
		{
			name: "gemini marker",
			host: "gemini",
			repo: repo,
			env:  map[string]string{"GEMINI_CLI_HOME": filepath.Join(tmp, "gh")},
			setup: func(t *testing.T) {
				write(t, filepath.Join(tmp, "gh", ".gemini", "tmp", "other", projectRootMarker), "/elsewhere")
				write(t, filepath.Join(tmp, "gh", ".gemini", "tmp", "mine", projectRootMarker), repo+"\n")
			},
			wantMemory:  filepath.Join(tmp, "gh", ".gemini", "tmp", "mine", "memory"),
			wantSession: filepath.Join(tmp, "gh", ".gemini", "tmp", "mine", "chats"),
			wantNotes:   "marker",
		},
		{
			name: "gemini legacy hash",
			host: "gemini",
			repo: repo,
			env:  map[string]string{"GEMINI_CLI_HOME": filepath.Join(tmp, "gl")},
			setup: func(t *testing.T) {
				mkdir(t, filepath.Join(tmp, "gl", ".gemini", "tmp", sha256Hex(repo)))
			},
			wantMemory:  filepath.Join(tmp, "gl", ".gemini", "tmp", sha256Hex(repo), "memory"),
			wantSession: filepath.Join(tmp, "gl", ".gemini", "tmp", sha256Hex(repo), "chats"),
			wantNotes:   "legacy",
		},
		{
			name:        "nanobot oldest layout",
			host:        "nanobot",
			wantMemory:  filepath.Join(home, ".nanobot", "workspace"),
			wantSession: filepath.Join(home, ".nanobot", "sessions"),
			wantNotes:   "global",
		},
		{
			name:        "nanobot sessions in workspace",
			host:        "nanobot",
			env:         map[string]string{"NANOBOT_HOME": filepath.Join(tmp, "nb1")},
			setup:       func(t *testing.T) { mkdir(t, filepath.Join(tmp, "nb1", "workspace", "sessions")) },
			wantMemory:  filepath.Join(tmp, "nb1", "workspace"),
			wantSession: filepath.Join(tmp, "nb1", "workspace", "sessions"),
			wantNotes:   "inside",
		},
		{
			name: "nanobot namespaced sessions",
			host: "nanobot",
			env:  map[string]string{"NANOBOT_HOME": filepath.Join(tmp, "nb2")},
			setup: func(t *testing.T) {
				id := strings.Repeat("ab", 16)
				write(t, filepath.Join(tmp, "nb2", "workspace", ".nanobot", "workspace-id"), id+"\n")
				mkdir(t, filepath.Join(tmp, "nb2", "sessions", id))
				mkdir(t, filepath.Join(tmp, "nb2", "workspace", "sessions"))
			},
			wantMemory:  filepath.Join(tmp, "nb2", "workspace"),
			wantSession: filepath.Join(tmp, "nb2", "sessions", strings.Repeat("ab", 16)),
			wantNotes:   "namespace",
		},
		{
			name: "nanobot bad workspace id ignored",
			host: "nanobot",
			env:  map[string]string{"NANOBOT_HOME": filepath.Join(tmp, "nb3")},
			setup: func(t *testing.T) {
				write(t, filepath.Join(tmp, "nb3", "workspace", ".nanobot", "workspace-id"), "../../etc\n")
			},
			wantMemory:  filepath.Join(tmp, "nb3", "workspace"),
			wantSession: filepath.Join(tmp, "nb3", "sessions"),
		},
		{
			name:        "codebot layout",
			host:        "codebot",
			repo:        repo,
			wantMemory:  filepath.Join(home, ".codebot", "projects", codebotProjectID(repo), "memory"),
			wantSession: filepath.Join(home, ".codebot", "projects", codebotProjectID(repo)),
			wantNotes:   "runs of non-alphanumerics",
		},
		{
			name:        "codebot home",
			host:        "codebot",
			repo:        repo,
			env:         map[string]string{"CODEBOT_HOME": filepath.Join(tmp, "cb")},
			wantMemory:  filepath.Join(tmp, "cb", "projects", codebotProjectID(repo), "memory"),
			wantSession: filepath.Join(tmp, "cb", "projects", codebotProjectID(repo)),
		},
		{
			name:        "dir",
			host:        "dir",
			repo:        repo,
			wantMemory:  filepath.Join(repo, "memory"),
			wantSession: "",
			wantNotes:   "no transcripts",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			l, err := Resolve(tc.host, tc.repo, home, envMap(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if l.Host != tc.host {
				t.Errorf("Host = %q", l.Host)
			}
			if l.MemoryDir != tc.wantMemory {
				t.Errorf("MemoryDir = %q\nwant        %q", l.MemoryDir, tc.wantMemory)
			}
			if l.SessionsDir != tc.wantSession {
				t.Errorf("SessionsDir = %q\nwant          %q", l.SessionsDir, tc.wantSession)
			}
			if l.Notes == "" || strings.Contains(l.Notes, "\n") || !strings.Contains(l.Notes, tc.wantNotes) {
				t.Errorf("Notes = %q, want one line containing %q", l.Notes, tc.wantNotes)
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name, host, repo, home string
		want                   []string
	}{
		{"unknown host lists names", "cursor", "/r", "/h", []string{`"cursor"`, "claude, codex, gemini, nanobot, codebot, dir"}},
		{"empty host", "", "/r", "/h", []string{"no host", "claude"}},
		{"per-project host needs a repo", "claude", "", "/h", []string{"repository"}},
		{"no home", "codex", "", "", []string{"home directory unknown", "CODEX_HOME"}},
		{"no home for gemini", "gemini", "/r", "", []string{"GEMINI_CLI_HOME"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.host, tc.repo, tc.home, nil)
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestNames(t *testing.T) {
	got := strings.Join(Names(), ",")
	if got != "claude,codex,gemini,nanobot,codebot,dir" {
		t.Errorf("Names = %s", got)
	}
}

func TestSanitizeProjectName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/Users/dev/my_project", "-Users-dev-my-project"},
		{"/home/u/.dotfiles", "-home-u--dotfiles"},
		{"C:\\src\\app", "C--src-app"},
		{"/é", "--"},
		{"/😀", "---"},
		{"/a\xffb", "-a-b"},
	}
	for _, tc := range tests {
		if got := sanitizeProjectName(tc.in); got != tc.want {
			t.Errorf("sanitizeProjectName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestClaudeLongPath(t *testing.T) {
	projects := t.TempDir()
	long := "/" + strings.Repeat("a", 250)
	prefix := sanitizeProjectName(long)[:maxProjectName] + "-"

	// With nothing on disk, the Node form of the hash is used.
	got := claudeProjectDir(projects, long)
	if want := filepath.Join(projects, prefix+djb2Base36(long)); got != want {
		t.Errorf("no dir: got %q, want %q", got, want)
	}
	// A single existing directory with the prefix wins, whatever its hash.
	mkdir(t, filepath.Join(projects, prefix+"bunhash"))
	if got := claudeProjectDir(projects, long); got != filepath.Join(projects, prefix+"bunhash") {
		t.Errorf("one dir: got %q", got)
	}
}

func TestDJB2Base36(t *testing.T) {
	// Expected values worked from the definition h = h*31 + c in int32.
	tests := []struct{ in, want string }{
		{"", "0"},
		{"a", "2p"},   // 97
		{"ab", "2e9"}, // 97*31 + 98 = 3105
		// Hashed over UTF-16 code units, as JavaScript does:
		// 0xD83D*31 + 0xDE00 = 1772899.
		{"\U0001F600", "11zz7"},
	}
	for _, tc := range tests {
		if got := djb2Base36(tc.in); got != tc.want {
			t.Errorf("djb2Base36(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Past 2^31 the int32 wraps; the suffix is its absolute value.
	if got := djb2Base36(strings.Repeat("z", 20)); strings.HasPrefix(got, "-") {
		t.Errorf("djb2Base36 of an overflowing input = %q, want non-negative", got)
	}
}

func TestCurrentSession(t *testing.T) {
	tests := []struct {
		name, host string
		env        map[string]string
		want       string
	}{
		{"claude code var", "claude", map[string]string{"CLAUDE_CODE_SESSION_ID": "u1", "CLAUDE_SESSION_ID": "u2"}, "u1"},
		{"claude fallback var", "claude", map[string]string{"CLAUDE_SESSION_ID": " u2 "}, "u2"},
		{"codex thread", "codex", map[string]string{"CODEX_THREAD_ID": "t1"}, "t1"},
		{"gemini", "gemini", map[string]string{"GEMINI_SESSION_ID": "g1"}, "g1"},
		{"other host's var ignored", "codex", map[string]string{"CLAUDE_SESSION_ID": "u2"}, ""},
		{"path-like id refused", "claude", map[string]string{"CLAUDE_CODE_SESSION_ID": "../x"}, ""},
		{"empty falls through", "claude", map[string]string{"CLAUDE_CODE_SESSION_ID": "", "CLAUDE_SESSION_ID": "u2"}, "u2"},
		{"host without vars", "nanobot", map[string]string{"CLAUDE_SESSION_ID": "u2"}, ""},
		{"unknown host", "zzz", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CurrentSession(tc.host, envMap(tc.env)); got != tc.want {
				t.Errorf("CurrentSession = %q, want %q", got, tc.want)
			}
		})
	}
	if got := CurrentSession("claude", nil); got != "" {
		t.Errorf("nil env: %q", got)
	}
}

// TestGeminiDotSlugIgnored: a projects.json slug of "." would put the memory
// dir at ~/.gemini/tmp/memory, shared by no project; it must be refused like
// "..", falling back to the slug Gemini CLI would claim.
func TestGeminiDotSlugIgnored(t *testing.T) {
	home := t.TempDir()
	repo := filepath.Join(home, "src", "app")
	mkdir(t, repo)
	write(t, filepath.Join(home, ".gemini", "projects.json"), `{"projects": {"`+repo+`": "."}}`)
	l, err := Resolve("gemini", repo, home, envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".gemini", "tmp", "app", "memory"); l.MemoryDir != want {
		t.Errorf("MemoryDir = %s, want %s", l.MemoryDir, want)
	}
}
