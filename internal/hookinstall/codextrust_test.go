package hookinstall

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hooksPath = "/home/u/.codex/hooks.json"

func codexTarget(event string) Target {
	return Target{Agent: "codex", Path: "hooks.json", Event: event, Command: "/usr/local/bin/dream hook --host codex"}
}

// TestCodexHookHash: the keys and hashes Codex 0.171.0 itself reported
// (its app-server's hooks/list, currentHash) for these hooks.json
// entries: the default timeout, a set one, one of 0 (Codex makes it 1),
// a quoted path with spaces, non-ASCII and characters JSON escapes, an
// event whose label has two words, and the handler's position.
func TestCodexHookHash(t *testing.T) {
	other := `{"hooks": [{"type": "command", "command": "notify-send done"}]}, `
	tests := []struct {
		name, event, groups, key, hash string
	}{
		{"default timeout", "Stop", `{"hooks": [{"type": "command", "command": "/usr/local/bin/dream hook --host codex"}]}`,
			"stop:0:0", "sha256:dee2b21da6c0b34dc749a2a84f7ac7d18cdb9ca52d4ee15c5aeee3acae8d3ad0"},
		{"second group, timeout 30", "Stop", other + `{"hooks": [{"type": "command", "command": "'/opt/my tools/dream' hook --host codex", "timeout": 30}]}`,
			"stop:1:0", "sha256:a3c807b47d845db2890fd97625962b05aaa0859ad6187e05cd28e17ab83d192e"},
		{"escapes", "Stop", other + other + `{"hooks": [{"type": "command", "command": "/home/zoë/bin/dream hook --host codex \"q\\\\\"\t"}]}`,
			"stop:2:0", "sha256:f5844e3f22bb7c8abe517020765a7c97c8ba194a942fcd0a25f50e1af997a2b2"},
		{"timeout 0 is 1", "Stop", `{"hooks": [{"type": "command", "command": "/usr/local/bin/dream hook --host codex", "timeout": 0}]}`,
			"stop:0:0", "sha256:c16717f5441fce079e0934696428b0b93545d7312827a785743d6ab2c6ca96fb"},
		{"two-word event", "UserPromptSubmit", `{"hooks": [{"type": "command", "command": "/usr/local/bin/dream hook --host codex"}]}`,
			"user_prompt_submit:0:0", "sha256:c796fd942a3e0380e4050268c6f464a5aba1c2f847101fbe56e4f2286371d840"},
		{"second handler", "Stop", `{"hooks": [{"type": "command", "command": "notify-send done"}, {"type": "command", "command": "/usr/local/bin/dream hook --host codex"}]}`,
			"stop:0:1", "sha256:dee2b21da6c0b34dc749a2a84f7ac7d18cdb9ca52d4ee15c5aeee3acae8d3ad0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `{"hooks": {"` + tt.event + `": [` + tt.groups + `]}}`
			h, ok, err := CodexHookOf(codexTarget(tt.event), []byte(src), hooksPath)
			if err != nil || !ok {
				t.Fatalf("CodexHookOf: %v, found %v", err, ok)
			}
			if h.Key != hooksPath+":"+tt.key || h.Hash != tt.hash {
				t.Errorf("got %s %s\nwant %s:%s %s", h.Key, h.Hash, hooksPath, tt.key, tt.hash)
			}
		})
	}
	// Fields dream does not write make the identity Codex's to compute.
	for _, extra := range []string{`"async": true`, `"statusMessage": "dreaming"`, `"timeout": "soon"`} {
		src := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/usr/local/bin/dream hook --host codex", ` + extra + `}]}]}}`
		if _, _, err := CodexHookOf(codexTarget("Stop"), []byte(src), hooksPath); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "/hooks") {
			t.Errorf("%s: err = %v, want a refusal pointing at /hooks", extra, err)
		}
	}
	if _, ok, err := CodexHookOf(codexTarget("Stop"), []byte(`{"hooks": {"Stop": []}}`), hooksPath); ok || err != nil {
		t.Errorf("no dream hook: found %v, %v", ok, err)
	}
}

// TestCodexTrustEdit: trust is appended as one table, every other byte
// kept; a second trust changes nothing; a hook whose command changed gets
// its hash replaced in place; untrusting gives back the original bytes;
// what cannot be edited safely is refused with the /hooks way out.
func TestCodexTrustEdit(t *testing.T) {
	h := CodexHook{Key: hooksPath + ":stop:0:0", Hash: "sha256:aaaa"}
	moved := CodexHook{Key: h.Key, Hash: "sha256:bbbb"}
	configs := map[string]string{
		"absent":              "",
		"plain":               "model = \"gpt\"\n\n[features]\nmemories = true\n",
		"no final newline":    "model = \"gpt\"",
		"other hook state":    "[hooks.state.\"/x/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:cc\"\n# trailing comment\n",
		"comments and tables": "# mine\n[profiles.fast]\nmodel = \"m\" # why\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n",
	}
	for name, src := range configs {
		t.Run(name, func(t *testing.T) {
			var in []byte
			if src != "" {
				in = []byte(src)
			}
			out, changed, err := TrustCodex(in, h)
			if err != nil || !changed {
				t.Fatalf("trust: changed %v, %v", changed, err)
			}
			if !strings.HasPrefix(string(out), src) || !strings.HasSuffix(string(out), codexTrustBlock(h)) {
				t.Errorf("not an append:\n%s", out)
			}
			if st, _ := CodexTrustState(out, h); st != CodexTrusted {
				t.Errorf("state after trust %s", st)
			}
			again, changed, err := TrustCodex(out, h)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("second trust changed %v, %v", changed, err)
			}
			if st, _ := CodexTrustState(out, moved); st != CodexModified {
				t.Errorf("another hash reads as %s, want modified", st)
			}
			re, changed, err := TrustCodex(out, moved)
			if err != nil || !changed || string(re) != strings.Replace(string(out), "sha256:aaaa", "sha256:bbbb", 1) {
				t.Errorf("re-trust after the command changed: %v %v\n%s", changed, err, re)
			}
			back, changed, err := UntrustCodex(re, moved)
			want := src
			if name == "no final newline" {
				want += "\n"
			}
			if err != nil || !changed || string(back) != want {
				t.Errorf("untrust: %v %v\n%q\nwant %q", changed, err, back, want)
			}
		})
	}
	refused := map[string]string{
		"not TOML":          "model = \n",
		"inline hooks":      "hooks = { state = {} }\n",
		"inline state":      "[hooks]\nstate = { \"/x\" = { enabled = true } }\n",
		"dotted inline":     "hooks.state = {}\n",
		"disabled":          "[hooks.state.\"" + h.Key + "\"]\nenabled = false\n",
		"foreign old trust": "[hooks.state]\n\"" + h.Key + "\" = { trusted_hash = \"sha256:old\" }\n",
	}
	for name, src := range refused {
		if _, _, err := TrustCodex([]byte(src), h); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: err = %v, want a refusal", name, err)
		}
	}
	// Untrusting leaves a trust dream did not write, and anything else.
	foreign := "[hooks.state.\"" + h.Key + "\"]\nenabled = true\ntrusted_hash = \"sha256:aaaa\"\n"
	if out, changed, err := UntrustCodex([]byte(foreign), h); changed || err != nil || string(out) != foreign {
		t.Errorf("untrust of a foreign table: %v %v", changed, err)
	}
}

// TestCodexTrustFile: the file form keeps the permissions, follows a
// symbolic link, and writes nothing when dry.
func TestCodexTrustFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "codex.toml")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("model = \"m\"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h := CodexHook{Key: hooksPath + ":stop:0:0", Hash: "sha256:aaaa"}
	res, err := CodexTrustFile(link, h, false, true)
	if err != nil || !res.Changed {
		t.Fatalf("dry: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(real); string(b) != "model = \"m\"\n" {
		t.Fatal("a dry run wrote")
	}
	if _, err := CodexTrustFile(link, h, false, false); err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(link)
	if err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
	st, _ := os.Stat(real)
	b, _ := os.ReadFile(real)
	if st.Mode().Perm() != 0o640 || !strings.Contains(string(b), "trusted_hash") {
		t.Errorf("mode %v, content %q", st.Mode().Perm(), b)
	}
	if _, err := CodexTrustFile(link, h, true, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "model = \"m\"\n" {
		t.Errorf("after removal %q", b)
	}
	// A fresh Codex home: the file is made, private to the user.
	fresh := filepath.Join(dir, "fresh", "config.toml")
	if err := os.MkdirAll(filepath.Dir(fresh), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := CodexTrustFile(fresh, h, false, false); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("new config.toml: %v %v", st, err)
	}
}
