package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// credHome makes a home with keys and tokens in it and points HOME at it,
// clearing the variables that would move a store elsewhere.
func credHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"GNUPGHOME", "GH_CONFIG_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "KUBECONFIG", "DOCKER_CONFIG"} {
		t.Setenv(v, "")
	}
	for name, content := range map[string]string{
		".ssh/id_ed25519":           "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
		".aws/credentials":          "[default]\naws_secret_access_key = x\n",
		".config/gh/hosts.yml":      "github.com:\n    oauth_token: gho_x\n",
		".claude/.credentials.json": "{}",
		".claude/CLAUDE.md":         "# Rules\n",
		".codex/auth.json":          "{}",
		".gemini/oauth_creds.json":  "{}",
		"notes.md":                  "# Notes\n",
	} {
		p := filepath.Join(home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestReadOnlyRefusesCredentials(t *testing.T) {
	home := credHome(t)
	// Relative: an absolute symlink is refused by os.Root whatever it names.
	if err := os.Symlink(".ssh", filepath.Join(home, "innocent")); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(NamedRoot{Name: "repo", RealDir: home})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	root, _ := ro.Root("repo")
	for _, rel := range []string{".ssh", ".ssh/id_ed25519", ".aws/credentials", ".config/gh", ".config/gh/hosts.yml", ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", "innocent", "innocent/id_ed25519"} {
		if _, err := ro.Stat(root, rel); !errors.Is(err, ErrCredential) {
			t.Errorf("stat %s: %v, want ErrCredential", rel, err)
		}
		if f, err := ro.Open(root, rel); !errors.Is(err, ErrCredential) {
			if f != nil {
				f.Close()
			}
			t.Errorf("open %s: %v, want ErrCredential", rel, err)
		}
		fsys, _ := ro.FS(root)
		if _, err := fs.ReadFile(fsys, rel); !errors.Is(err, ErrCredential) {
			t.Errorf("fs read %s: %v, want ErrCredential", rel, err)
		}
	}
	for _, rel := range []string{"notes.md", ".claude/CLAUDE.md"} {
		f, err := ro.Open(root, rel)
		if err != nil {
			t.Errorf("open %s: %v", rel, err)
			continue
		}
		f.Close()
	}
	// A walk of the whole home never enters, nor names, a credential location.
	fsys, _ := ro.FS(root)
	var seen []string
	if err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		seen = append(seen, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(seen, "\n")
	for _, bad := range []string{".ssh", ".aws", "gh", "credentials", "auth.json", "oauth_creds", "innocent"} {
		if strings.Contains(all, bad) {
			t.Errorf("the walk listed %q:\n%s", bad, all)
		}
	}
	if !strings.Contains(all, "notes.md") || !strings.Contains(all, ".claude/CLAUDE.md") {
		t.Errorf("the walk missed ordinary files:\n%s", all)
	}
	// .ssh .aws gh .credentials.json auth.json oauth_creds.json innocent
	if n := CredentialsSkipped(fsys); n != 7 {
		t.Errorf("CredentialsSkipped = %d, want 7", n)
	}
}

// A root that is, or lies inside, a credential directory is refused whole.
func TestReadOnlyRootInsideCredentials(t *testing.T) {
	home := credHome(t)
	inner := filepath.Join(home, ".ssh", "notes")
	if err := os.MkdirAll(inner, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inner, "a.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(home, ".ssh"), inner} {
		ro, err := OpenReadOnly(NamedRoot{Name: "sessions", RealDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		root, _ := ro.Root("sessions")
		if _, err := ro.Stat(root, "."); !errors.Is(err, ErrCredential) {
			t.Errorf("%s: stat . = %v, want ErrCredential", dir, err)
		}
		fsys, _ := ro.FS(root)
		if _, err := fs.ReadDir(fsys, "."); !errors.Is(err, ErrCredential) {
			t.Errorf("%s: readdir . = %v, want ErrCredential", dir, err)
		}
		ro.Close()
	}
}
