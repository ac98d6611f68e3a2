package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGemini installs an npm-style Gemini CLI of version in a temp dir (a
// bin/gemini link into lib/node_modules/@google/gemini-cli, as npm -g
// lays it out) and returns the PATH that finds it.
func fakeGemini(t *testing.T, version string) string {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "lib", "node_modules", "@google", "gemini-cli")
	write(t, filepath.Join(pkg, "package.json"), `{"name": "@google/gemini-cli", "version": "`+version+`", "bin": {"gemini": "bundle/gemini.js"}}`)
	write(t, filepath.Join(pkg, "bundle", "gemini.js"), "#!/usr/bin/env node\n")
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "lib", "node_modules", "@google", "gemini-cli", "bundle", "gemini.js"), filepath.Join(root, "bin", "gemini")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "bin")
}

// TestGeminiVersionLayouts: the layout follows the Gemini CLI installed:
// memory v2 (a MEMORY.md index, notes beside it read on demand, the whole
// global GEMINI.md) from 0.44, and from 0.40 unless experimental.memoryV2
// is off; the save_memory section before.
func TestGeminiVersionLayouts(t *testing.T) {
	tests := []struct {
		name, version, settings string
		v2                      bool
	}{
		{"0.61.0 (verified)", "0.61.0", "", true},
		{"0.44.0", "0.44.0", `{"experimental": {"memoryV2": false}}`, true},
		{"0.43.0 default", "0.43.0", "", true},
		{"0.43.0 memoryV2 off", "0.43.0", "// mine\n{\"experimental\": {\"memoryV2\": false}}", false},
		{"0.40.0", "0.40.0", `{"experimental": {}}`, true},
		{"0.39.1", "0.39.1", "", false},
		{"pre-release", "0.62.0-nightly.20261201", "", true},
		{"not on PATH", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := map[string]string{"PATH": "/nonexistent"}
			if tt.version != "" {
				env["PATH"] = "/nonexistent" + string(os.PathListSeparator) + fakeGemini(t, tt.version)
			}
			if tt.settings != "" {
				write(t, filepath.Join(home, ".gemini", "settings.json"), tt.settings)
			}
			l, err := Resolve("gemini", "/src/app", home, envMap(env))
			if err != nil {
				t.Fatal(err)
			}
			global := filepath.Join(home, ".gemini", "GEMINI.md")
			g, ok := l.FileFor(global)
			if !ok {
				t.Fatalf("no global file in %+v", l.Files)
			}
			if got := g.Role == RoleDocument; got != tt.v2 {
				t.Errorf("global GEMINI.md is %s, want the v2 layout = %v", g.Role, tt.v2)
			}
			idx, ok := l.FileFor("MEMORY.md")
			if ok != tt.v2 || tt.v2 && (idx.Role != RoleIndex || !idx.Loaded || idx.OnDemand) {
				t.Errorf("MEMORY.md: %+v (listed %v)", idx, ok)
			}
			var src string
			for _, s := range l.Sources {
				if s.What == "gemini version" {
					src = s.From
				}
			}
			if src != tt.version {
				t.Errorf("the layout names version %q, want %q", src, tt.version)
			}
		})
	}
}

// TestGeminiLegacyIndex: with memory v2, memory/GEMINI.md is what Gemini
// loads only while there is no MEMORY.md; once MEMORY.md exists,
// GEMINI.md is a note like any other, not loaded (0.61.0, seen from its
// requests), and status must not call it loaded.
func TestGeminiLegacyIndex(t *testing.T) {
	home := t.TempDir()
	env := envMap(map[string]string{"PATH": fakeGemini(t, "0.61.0")})
	mem := filepath.Join(home, ".gemini", "tmp", "app", "memory")
	write(t, filepath.Join(mem, "GEMINI.md"), "- legacy\n")
	l, _ := Resolve("gemini", "/src/app", home, env)
	if f, _ := l.FileFor("GEMINI.md"); f.Role != RoleIndex || f.OnDemand {
		t.Errorf("without MEMORY.md, GEMINI.md is %+v; Gemini loads it as the index", f)
	}
	write(t, filepath.Join(mem, "MEMORY.md"), "- index\n")
	l, _ = Resolve("gemini", "/src/app", home, env)
	if f, _ := l.FileFor("GEMINI.md"); f.Role == RoleIndex || !f.OnDemand {
		t.Errorf("beside MEMORY.md, GEMINI.md is %+v; Gemini does not load it", f)
	}
	if !strings.Contains(strings.Join(l.Assumptions, "\n"), "only while memory/MEMORY.md does not exist") {
		t.Errorf("assumptions %q", l.Assumptions)
	}
}

func TestParseVersion(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want [3]int
		ok   bool
	}{
		{"0.61.0", [3]int{0, 61, 0}, true},
		{"1.2.3-beta.1", [3]int{1, 2, 3}, true},
		{"0.62.0-nightly.20261201.abc", [3]int{0, 62, 0}, true},
		{"", [3]int{}, false},
		{"1.2", [3]int{}, false},
		{"v1.2.3", [3]int{}, false},
		{"1.x.3", [3]int{}, false},
	} {
		got, ok := parseVersion(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("parseVersion(%q) = %v, %v", tt.in, got, ok)
		}
	}
}
