package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeCase is a path that write and edit must refuse, with a fragment the
// error must contain.
type escapeCase struct {
	name, path, errText string
}

// setupEscapes plants symbolic links in the staging dir that point outside,
// and returns the paths that must be refused.
func setupEscapes(t *testing.T, f *fixture) []escapeCase {
	t.Helper()
	writeFile(t, filepath.Join(f.outside, "victim.md"), "keep")
	if err := os.Symlink(filepath.Join(f.outside, "victim.md"), filepath.Join(f.staging, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.outside, filepath.Join(f.staging, "outdir")); err != nil {
		t.Fatal(err)
	}
	return []escapeCase{
		{"dotdot", "../x.md", "inside the memory directory"},
		{"dotdot deep", "a/../../outside/victim.md", "inside the memory directory"},
		{"absolute outside", filepath.Join(f.outside, "victim.md"), "inside the memory directory"},
		{"sibling prefix", f.display + "-evil/a.md", "inside the memory directory"},
		{"symlink to outside file", "link.md", ""},
		{"symlinked directory component", "outdir/victim.md", ""},
		{"symlinked directory new file", "outdir/new.md", ""},
		{"lock", ".consolidate-lock", "lock"},
		{"lock upper", ".CONSOLIDATE-LOCK", "lock"},
		{"lock mixed absolute", filepath.Join(f.display, ".Consolidate-Lock"), "lock"},
		{"git config", ".git/config", ".git"},
		{"memory dir itself", f.display, "not a file"},
	}
}

// checkOutsideUntouched fails if anything outside the staging dir changed.
func checkOutsideUntouched(t *testing.T, f *fixture) {
	t.Helper()
	if got := readFile(t, filepath.Join(f.outside, "victim.md")); got != "keep" {
		t.Fatalf("file outside the memory dir changed: %q", got)
	}
	entries, _ := os.ReadDir(f.outside)
	if len(entries) != 1 {
		t.Fatalf("outside dir has %d entries, want 1", len(entries))
	}
	if entries, _ := os.ReadDir(filepath.Join(f.base, "memory-evil")); len(entries) != 0 {
		t.Fatal("sibling dir was written")
	}
	if _, err := os.Stat(filepath.Join(f.base, "x.md")); err == nil {
		t.Fatal("parent dir was written")
	}
}

func TestWriteEscapes(t *testing.T) {
	f := newFixture(t, Limits{})
	for _, tc := range setupEscapes(t, f) {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.call(t, "write", map[string]any{"file_path": tc.path, "content": "pwned\n"})
			wantErr(t, err, tc.errText)
		})
	}
	checkOutsideUntouched(t, f)
	if _, err := os.Stat(filepath.Join(f.staging, ".consolidate-lock")); err == nil {
		t.Fatal("lock file was written")
	}
}

func TestWrite(t *testing.T) {
	f := newFixture(t, Limits{WriteMaxBytes: 64})
	writeFile(t, filepath.Join(f.staging, "existing.md"), "old\n")
	tests := []struct {
		name    string
		path    string
		content *string
		touched string
		errText []string
	}{
		{name: "create relative", path: "new.md", content: ptr("hello\n"), touched: "new.md"},
		{name: "create with parents", path: "topics/deep/x.md", content: ptr("x\n"), touched: "topics/deep/x.md"},
		{name: "display path maps to staging", path: filepath.Join(f.display, "disp.md"), content: ptr("d\n"), touched: "disp.md"},
		{name: "staging path accepted", path: filepath.Join(f.staging, "real.md"), content: ptr("r\n"), touched: "real.md"},
		{name: "replace", path: "existing.md", content: ptr("new\n"), touched: "existing.md"},
		{name: "no-op", path: "topics/deep/x.md", content: ptr("x\n"), errText: []string{"already has exactly this content"}},
		{name: "too large", path: "big.md", content: ptr(strings.Repeat("a", 65)), errText: []string{"65 bytes", "64-byte limit"}},
		{name: "empty", path: "e.md", content: ptr(""), errText: []string{"empty"}},
		{name: "missing content", path: "e.md", errText: []string{"content is required"}},
		{name: "github token", path: "s.md", content: ptr("token " + fakeToken("ghp_", 36)), errText: []string{"GitHub token", "line 1"}},
		{name: "aws key", path: "s.md", content: ptr("a\n" + "AKIA" + "ABCDEFGHIJKLMNOP"), errText: []string{"AWS access key id", "line 2"}},
		{name: "pem", path: "s.md", content: ptr("-----BEGIN EC " + "PRIVATE KEY-----\n"), errText: []string{"PEM private key"}},
		{name: "assignment", path: "s.md", content: ptr("API_KEY=" + fakeToken("", 24)), errText: []string{"API_KEY"}},
		{name: "placeholder is fine", path: "p.md", content: ptr("API_KEY=<your-token>\n"), touched: "p.md"},
		{name: "env reference is fine", path: "p2.md", content: ptr("token: ${GITHUB_TOKEN}\n"), touched: "p2.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := map[string]any{"file_path": tt.path}
			if tt.content != nil {
				in["content"] = *tt.content
			}
			res, err := f.call(t, "write", in)
			if tt.errText != nil {
				wantErr(t, err, tt.errText...)
				if strings.Contains(tt.name, "token") && strings.Contains(err.Error(), "ghp_") {
					t.Errorf("error echoes the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Touched != tt.touched {
				t.Errorf("Touched = %q, want %q", res.Touched, tt.touched)
			}
			if got := readFile(t, filepath.Join(f.staging, filepath.FromSlash(tt.touched))); got != *tt.content {
				t.Errorf("staged content = %q, want %q", got, *tt.content)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.display, "disp.md")); err == nil {
		t.Error("the display dir was written; only the staging dir may be")
	}
	for _, name := range []string{"s.md", "big.md", "e.md"} {
		if _, err := os.Stat(filepath.Join(f.staging, name)); err == nil {
			t.Errorf("refused write left %s behind", name)
		}
	}
}

// A file the user already keeps a secret in can still be rewritten, as long
// as no new secret is added.
func TestWriteKeepsPreexistingSecret(t *testing.T) {
	f := newFixture(t, Limits{})
	key := fakeToken("glpat-", 24)
	writeFile(t, filepath.Join(f.staging, "creds.md"), "old note\n"+key+"\n")
	if _, err := f.call(t, "write", map[string]any{"file_path": "creds.md", "content": "merged note\n" + key + "\n"}); err != nil {
		t.Fatalf("rewrite with the same secret: %v", err)
	}
	_, err := f.call(t, "write", map[string]any{"file_path": "copy.md", "content": key})
	wantErr(t, err, "GitLab token")
}

func ptr(s string) *string { return &s }

// fakeToken builds a credential-shaped string at run time.
func fakeToken(prefix string, n int) string {
	const alphabet = "aB3dE5gH7jK9mN2pQ4sT6vW8yZ"
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[(i*7+3)%len(alphabet)])
	}
	return b.String()
}
