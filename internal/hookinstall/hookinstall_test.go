package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/jsonc"
)

func claudeTarget(path string) Target {
	return Target{Agent: "claude", Path: path, Event: "SessionEnd", Command: "/usr/local/bin/dream hook --host claude", Comments: true}
}

// settingsCases are settings files as users have them: written by the
// agent, edited by hand, with comments, tabs, CRLF, one line, other hooks.
var settingsCases = []struct {
	name, src string
}{
	{"missing", ""},
	{"empty object", "{}\n"},
	{"agent-written", `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(go test:*)", "Read(~/src/**)"]
  },
  "model": "sonnet"
}
`},
	{"other hook events", `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "~/.claude/guard.sh"}]
      }
    ]
  }
}
`},
	{"SessionEnd already used", `{
    "hooks": {
        "SessionEnd": [
            {"hooks": [{"type": "command", "command": "notify-send 'bye'"}]}
        ]
    },
    "env": {"FOO": "1"}
}
`},
	{"comments and odd spacing", "// my Claude settings\n{\n\t\"model\" :  \"opus\" , /* keep opus */\n\t\"hooks\":{ }\n  // end\n}\n"},
	{"one line", `{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}`},
	{"crlf", "{\r\n  \"model\": \"opus\"\r\n}\r\n"},
	{"unicode", "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo 你好 🐈\"}\n}\n"},
	{"empty SessionEnd array", "{\n  \"hooks\": {\n    \"SessionEnd\": []\n  }\n}\n"},
}

// TestInstallTwiceRemoveRestores: every case gets exactly one dream hook
// however often it is installed, the result still parses with the other
// settings intact, and removing gives back the original bytes.
func TestInstallTwiceRemoveRestores(t *testing.T) {
	for _, tc := range settingsCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			if tc.src != "" {
				if err := os.WriteFile(path, []byte(tc.src), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			tg := claudeTarget(path)
			r1, err := InstallFile(tg, false)
			if err != nil {
				t.Fatal(err)
			}
			if !r1.Changed {
				t.Fatal("first install changed nothing")
			}
			r2, err := InstallFile(tg, false)
			if err != nil {
				t.Fatal(err)
			}
			if r2.Changed {
				t.Fatalf("second install changed the file again:\n%s", r2.After)
			}
			got, _ := os.ReadFile(path)
			if n := countOurs(t, got); n != 1 {
				t.Fatalf("%d dream hooks after two installs:\n%s", n, got)
			}
			checkOthersKept(t, []byte(tc.src), got)
			if tc.src != "" {
				info, _ := os.Stat(path)
				if info.Mode().Perm() != 0o640 {
					t.Errorf("mode became %v", info.Mode().Perm())
				}
				if b, err := os.ReadFile(path + BackupSuffix); err != nil || string(b) != tc.src {
					t.Errorf("backup = %q, %v", b, err)
				}
			}
			rr, err := RemoveFile(tg, false)
			if err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			if tc.src == "" {
				if !rr.Deleted || !os.IsNotExist(err) {
					t.Fatalf("a file dream created was not removed again: %q %v", after, err)
				}
				return
			}
			if string(after) != tc.src {
				t.Fatalf("--remove did not restore the bytes:\n got %q\nwant %q", after, tc.src)
			}
			if _, err := os.Stat(path + BackupSuffix); !os.IsNotExist(err) {
				t.Errorf("the backup outlived --remove: %v", err)
			}
			// The surgical path alone (no backup) must also restore them.
			inst, _, err := Install(tg, []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			cut, _, err := Remove(tg, inst)
			if err != nil {
				t.Fatal(err)
			}
			if string(cut) != tc.src && !strings.Contains(tc.src, "{ }") && !strings.Contains(tc.src, "[]") {
				t.Errorf("splicing the hook out did not restore the bytes:\n got %q\nwant %q", cut, tc.src)
			}
		})
	}
}

// TestRemoveKeepsLaterEdits: edits the user made after the install survive
// --remove; only dream's hook goes.
func TestRemoveKeepsLaterEdits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte(settingsCases[3].src), 0o644)
	tg := claudeTarget(path)
	if _, err := InstallFile(tg, false); err != nil {
		t.Fatal(err)
	}
	cur, _ := os.ReadFile(path)
	edited := bytes.Replace(cur, []byte(`"matcher": "Bash"`), []byte(`"matcher": "Bash|Edit"`), 1)
	os.WriteFile(path, edited, 0o644)
	res, err := RemoveFile(tg, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored {
		t.Fatal("the backup was put back over the user's later edit")
	}
	got, _ := os.ReadFile(path)
	want := strings.Replace(settingsCases[3].src, `"matcher": "Bash"`, `"matcher": "Bash|Edit"`, 1)
	if string(got) != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestRefusals: files dream cannot edit safely are left alone with a
// message that says why.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name, src, want string
		comments        bool
	}{
		{"trailing comma", "{\n  \"model\": \"opus\",\n}\n", "trailing comma", true},
		{"comments for codex", "// codex hooks\n{}\n", "comments", false},
		{"not an object", "[1, 2]\n", "not a JSON object", true},
		{"hooks not an object", `{"hooks": []}`, `"hooks" is not an object`, true},
		{"event not an array", `{"hooks": {"SessionEnd": {}}}`, "is not an array", true},
		{"duplicate key", `{"a": 1, "a": 2}`, "duplicate key", true},
		{"single quotes", `{'a': 1}`, "expected a quoted key", true},
		{"unterminated comment", "{} /* oops", "unterminated", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			os.WriteFile(path, []byte(tc.src), 0o644)
			tg := claudeTarget(path)
			tg.Comments = tc.comments
			_, err := InstallFile(tg, false)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.want)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.src {
				t.Fatal("a refused file was changed")
			}
			if _, err := os.Stat(path + BackupSuffix); err == nil {
				t.Fatal("a refused file got a backup")
			}
		})
	}
}

// TestSymlinkedSettingsStayLinked: a settings file linked from a dotfiles
// checkout is edited through the link.
func TestSymlinkedSettingsStayLinked(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "settings.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte("{}\n"), 0o644)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if _, err := InstallFile(claudeTarget(link), false); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
	b, _ := os.ReadFile(real)
	if countOurs(t, b) != 1 {
		t.Fatalf("hook not written through the link: %s", b)
	}
}

func TestIsOurs(t *testing.T) {
	for cmd, want := range map[string]bool{
		"dream hook --host claude":               true,
		"/home/u/go/bin/dream hook --host codex": true,
		"'/Applications/My Tools/dream' hook":    true,
		"dream maybe --host claude --hook":       false,
		"dreamer hook":                           false,
		`C:\tools\dream.exe hook --host gemini`:  true,
		"notify-send dream hook":                 false,
		// Whatever the binary is called: its name, or what init writes.
		"/opt/bin/dream-linux-amd64 hook --host claude": true,
		"/opt/bin/dream-linux-amd64 hook":               true,
		"/opt/bin/renamed hook --host claude":           true,
		"/opt/bin/renamed hook":                         false,
		"/opt/bin/renamed hook --host claude --x 1":     false,
	} {
		if got := IsOurs(cmd); got != want {
			t.Errorf("IsOurs(%q) = %v", cmd, got)
		}
	}
}

// TestIsDreamBinary: a Go binary is dream's only when built from
// cmd/dream (this test binary is not); a FIFO is never opened.
func TestIsDreamBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if IsDreamBinary(exe) {
		t.Errorf("the test binary %s taken for dream", exe)
	}
	for _, p := range []string{"", "relative/dream", t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if IsDreamBinary(p) {
			t.Errorf("IsDreamBinary(%q) = true", p)
		}
	}
}

// TestInsertedBlockFollowsIndentation: the hook block is indented with the
// file's own unit (four spaces, a tab), at every depth it is inserted.
func TestInsertedBlockFollowsIndentation(t *testing.T) {
	tg := claudeTarget("settings.json")
	for _, tc := range []struct{ name, src, want string }{
		{"four spaces, no hooks", "{\n    \"model\": \"opus\"\n}\n",
			"{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"SessionEnd\": [\n            " + groupText(tg) + "\n        ]\n    }\n}\n"},
		{"tabs, no hooks", "{\n\t\"model\": \"opus\"\n}\n",
			"{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"SessionEnd\": [\n\t\t\t" + groupText(tg) + "\n\t\t]\n\t}\n}\n"},
		{"four spaces, other events", "{\n    \"hooks\": {\n        \"Stop\": []\n    }\n}\n",
			"{\n    \"hooks\": {\n        \"Stop\": [],\n        \"SessionEnd\": [\n            " + groupText(tg) + "\n        ]\n    }\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Install(tg, []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestMovedBinaryReplacesItsHook: init from a dream binary that moved (or
// is called otherwise) points the one dream hook at it instead of adding a
// second; --remove then still gives back the original bytes and drops the
// backup.
func TestMovedBinaryReplacesItsHook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	orig := "{\n  \"model\": \"opus\"\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	old := claudeTarget(path)
	old.Command = "/home/u/Downloads/dream-linux-amd64 hook --host claude"
	if _, err := InstallFile(old, false); err != nil {
		t.Fatal(err)
	}
	moved := claudeTarget(path)
	moved.Command = "/usr/local/bin/dream-linux-amd64 hook --host claude"
	res, err := InstallFile(moved, false)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !res.Changed || res.Command != old.Command || countOurs(t, got) != 1 || !strings.Contains(string(got), moved.Command) {
		t.Fatalf("changed %v, replaced %q:\n%s", res.Changed, res.Command, got)
	}
	if b, _ := os.ReadFile(path + BackupSuffix); string(b) != orig {
		t.Errorf("the backup is no longer the file before dream: %q", b)
	}
	// Removed by yet another binary: restored all the same.
	rr, err := RemoveFile(claudeTarget(path), false)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if !rr.Restored || string(got) != orig || rr.Command != moved.Command {
		t.Fatalf("restored %v, removed %q:\n%s", rr.Restored, rr.Command, got)
	}
	if _, err := os.Stat(path + BackupSuffix); !os.IsNotExist(err) {
		t.Errorf("backup left: %v", err)
	}
}

func countOurs(t *testing.T, src []byte) int {
	t.Helper()
	root, _, err := jsonc.Parse(src)
	if err != nil {
		t.Fatalf("result does not parse: %v\n%s", err, src)
	}
	n := 0
	for _, g := range root.Get("hooks").Get("SessionEnd").Items {
		for _, h := range g.Get("hooks").Items {
			if c, _ := h.Get("command").Text(); IsOurs(c) {
				n++
			}
		}
	}
	return n
}

// checkOthersKept: apart from hooks.SessionEnd, the settings decode to the
// same values before and after.
func checkOthersKept(t *testing.T, before, after []byte) {
	t.Helper()
	strip := func(b []byte) map[string]any {
		m := map[string]any{}
		if len(bytes.TrimSpace(b)) == 0 {
			return m
		}
		root, _, err := jsonc.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(withoutComments(b, root), &m); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		if h, ok := m["hooks"].(map[string]any); ok {
			delete(h, "SessionEnd")
			if len(h) == 0 {
				delete(m, "hooks")
			}
		}
		return m
	}
	a, b := strip(before), strip(after)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("other settings changed:\nbefore %s\nafter  %s", ja, jb)
	}
}

// withoutComments re-serialises the parsed tree's source span as plain JSON
// by blanking comments (positions outside any token).
func withoutComments(src []byte, root *jsonc.Value) []byte {
	out := []byte(string(src[root.Start:root.End]))
	// Comments inside: blank them with a tiny scanner that respects strings.
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			for i+1 < len(out) && !(out[i] == '*' && out[i+1] == '/') {
				out[i] = ' '
				i++
			}
			out[i], out[i+1] = ' ', ' '
			i++
		}
	}
	return out
}
