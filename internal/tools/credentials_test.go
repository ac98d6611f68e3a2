package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKey is a private key as ssh-keygen writes it (the body is made up):
// what must never reach the model.
const fakeKey = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBkcmVhbS10ZXN0LWZha2Uta2V5LW5vdC1yZWFsLTAwMDAwMAAAAJgAAAA
-----END OPENSSH PRIVATE KEY-----
`

const fakeAWS = "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"

// homeFixture is the world of a session started in the home directory: the
// repository root is $HOME, which holds the user's keys and tokens.
func homeFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"GNUPGHOME", "GH_CONFIG_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "KUBECONFIG", "DOCKER_CONFIG"} {
		t.Setenv(v, "")
	}
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), fakeKey)
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519.pub"), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEXAMPLE user@host\n")
	writeFile(t, filepath.Join(home, ".aws", "credentials"), fakeAWS)
	writeFile(t, filepath.Join(home, ".config", "gh", "hosts.yml"), "github.com:\n    oauth_token: gho_EXAMPLEexampleEXAMPLEexample0000\n")
	writeFile(t, filepath.Join(home, ".config", "nvim", "init.lua"), "-- BEGIN harmless\nvim.o.number = true\n")
	writeFile(t, filepath.Join(home, ".claude", ".credentials.json"), `{"claudeAiOauth":{"accessToken":"sk-ant-oat01-EXAMPLE"}}`)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"model":"opus"}`)
	writeFile(t, filepath.Join(home, ".codex", "auth.json"), `{"OPENAI_API_KEY":"sk-EXAMPLE"}`)
	writeFile(t, filepath.Join(home, ".gemini", "oauth_creds.json"), `{"access_token":"ya29.EXAMPLE"}`)
	writeFile(t, filepath.Join(home, "notes.md"), "# Notes\n\nBEGIN the day with coffee.\n")
	// A symlink and a hard link elsewhere in the tree reach the same key.
	mkdir(t, filepath.Join(home, "proj"))
	if err := os.Symlink(filepath.Join("..", ".ssh"), filepath.Join(home, "proj", "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(home, "proj", "backup")); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	f := &fixture{base: base, repo: home, display: filepath.Join(base, "memory"), staging: filepath.Join(base, "memory"), sessions: filepath.Join(base, "sessions")}
	mkdir(t, f.display)
	set, err := NewSet(Env{MemoryDir: f.display, RepoDir: home, SessionsDir: f.sessions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	f.set = set
	return f, home
}

// secretsIn lists the credential names and contents found in s, once the
// tools' own notes ("refused: credentials location") are taken out.
func secretsIn(s string) []string {
	s = strings.ReplaceAll(s, "refused: credentials location", "")
	s = strings.ReplaceAll(s, "credential location(s) skipped", "")
	var found []string
	for _, frag := range []string{"OPENSSH PRIVATE", "b3BlbnNzaC1rZXkt", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "gho_EXAMPLE", "sk-ant-oat01", "sk-EXAMPLE", "ya29.EXAMPLE",
		"id_ed25519", "credentials", "hosts.yml", "auth.json", "oauth_creds", ".ssh", ".aws", "/gh", "keys/"} {
		if strings.Contains(s, frag) {
			found = append(found, frag)
		}
	}
	return found
}

func TestCredentialsRefusedThroughRepoRoot(t *testing.T) {
	f, home := homeFixture(t)
	for _, p := range []string{
		filepath.Join(home, ".ssh", "id_ed25519"),
		filepath.Join(home, ".ssh"),
		filepath.Join(home, ".aws", "credentials"),
		filepath.Join(home, ".config", "gh", "hosts.yml"),
		filepath.Join(home, ".claude", ".credentials.json"),
		filepath.Join(home, ".codex", "auth.json"),
		filepath.Join(home, ".gemini", "oauth_creds.json"),
		".ssh/id_ed25519",
		"proj/keys/id_ed25519",
		"proj/backup",
		"proj/../.ssh/./id_ed25519",
	} {
		t.Run(p, func(t *testing.T) {
			res, err := f.call(t, "read", map[string]any{"file_path": p})
			if err == nil {
				t.Fatalf("read %s succeeded: %q", p, res.Content)
			}
			if !strings.Contains(err.Error(), "refused: credentials location") {
				t.Fatalf("read %s: want a credentials refusal, got %v", p, err)
			}
			if s := secretsIn(res.Content); len(s) > 0 {
				t.Fatalf("read %s leaked %v", p, s)
			}
		})
	}
	// What is not a credential stays readable.
	for _, p := range []string{"notes.md", ".claude/settings.json", ".config/nvim/init.lua", ".ssh-notes-do-not-exist"} {
		res, err := f.call(t, "read", map[string]any{"file_path": p})
		if p == ".ssh-notes-do-not-exist" {
			if err == nil || strings.Contains(err.Error(), "credentials") {
				t.Fatalf("read %s: want not-found, got %v", p, err)
			}
			continue
		}
		if err != nil || res.Content == "" {
			t.Fatalf("read %s: %v", p, err)
		}
	}
}

func TestCredentialsHiddenFromListings(t *testing.T) {
	f, home := homeFixture(t)
	cases := []struct {
		tool  string
		input map[string]any
		want  string // a fragment the result must hold: the search worked
	}{
		{"glob", map[string]any{"pattern": "**/*"}, "notes.md"},
		{"glob", map[string]any{"pattern": "**/id_*"}, "No files match"},
		{"glob", map[string]any{"pattern": "**/*", "path": filepath.Join(home, ".config")}, "init.lua"},
		{"glob", map[string]any{"pattern": "*", "path": filepath.Join(home, "proj")}, "proj/backup"}, // the name of a hard link is no secret; its content is
		{"grep", map[string]any{"pattern": "BEGIN", "output_mode": "content"}, "BEGIN the day"},
		{"grep", map[string]any{"pattern": "EXAMPLE|PRIVATE|token", "output_mode": "files_with_matches"}, "No matches"},
		{"grep", map[string]any{"pattern": "oauth", "path": filepath.Join(home, ".config"), "output_mode": "content"}, "No matches"},
		{"ls", map[string]any{"path": home}, "notes.md"},
		{"ls", map[string]any{"path": filepath.Join(home, ".config")}, "nvim/"},
		{"ls", map[string]any{"path": filepath.Join(home, ".claude")}, "settings.json"},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+strAny(c.input["pattern"])+" "+strings.TrimPrefix(strAny(c.input["path"]), home), func(t *testing.T) {
			res, err := f.call(t, c.tool, c.input)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Content, c.want) {
				t.Fatalf("want %q in\n%s", c.want, res.Content)
			}
			if s := secretsIn(res.Content); len(s) > 0 {
				t.Fatalf("%s leaked %v:\n%s", c.tool, s, res.Content)
			}
			if !strings.Contains(res.Content, "credential location(s) skipped") {
				t.Fatalf("%s does not say it skipped credential locations:\n%s", c.tool, res.Content)
			}
		})
	}
	// Named directly, a credential directory is refused.
	for _, tool := range []string{"ls", "glob", "grep"} {
		in := map[string]any{"path": filepath.Join(home, ".ssh"), "pattern": "key"}
		if tool == "ls" {
			delete(in, "pattern")
		}
		res, err := f.call(t, tool, in)
		if err == nil || !strings.Contains(err.Error(), "refused: credentials location") {
			t.Fatalf("%s ~/.ssh: want a refusal, got %v %q", tool, err, res.Content)
		}
	}
}

func strAny(v any) string {
	s, _ := v.(string)
	return s
}
