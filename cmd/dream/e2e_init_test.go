package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// userSettings is a hand-edited Claude Code settings file: comments, tabs,
// a trailing comment, other hooks.
const userSettings = "// Claude Code settings, kept in dotfiles\n{\n\t\"model\": \"opus\",   /* the big one */\n\t\"hooks\": {\n\t\t\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"~/bin/guard\"}]}]\n\t}\n}\n// end\n"

// TestInitClaude: twice leaves one hook, --dry-run writes nothing,
// --remove restores the bytes, --project writes the project's file, a file
// dream cannot edit safely is refused with a clear message.
func TestInitClaude(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude")
	path := filepath.Join(w.home, ".claude", "settings.json")
	if err := os.WriteFile(path, []byte(userSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	r := w.dream("init", "claude", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, `+		"SessionEnd": [`) || !strings.Contains(r.stdout, "dry run") {
		t.Fatalf("dry run: %s", r)
	}
	if b, _ := os.ReadFile(path); string(b) != userSettings {
		t.Fatal("--dry-run wrote the file")
	}
	for i := 0; i < 2; i++ {
		if r := w.dream("init", "claude"); r.code != 0 {
			t.Fatalf("init %d: %s", i, r)
		}
	}
	installedCommand(t, path, "SessionEnd") // exactly one
	b, _ := os.ReadFile(path)
	for _, keep := range []string{"// Claude Code settings, kept in dotfiles", "/* the big one */", "~/bin/guard", "// end\n"} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("install lost %q:\n%s", keep, b)
		}
	}
	if r := w.dream("init", "claude", "--remove"); r.code != 0 || !strings.Contains(r.stdout, "byte for byte") {
		t.Fatalf("remove: %s", r)
	}
	if b, _ := os.ReadFile(path); string(b) != userSettings {
		t.Fatalf("--remove did not restore the bytes:\n%q", b)
	}
	if r := w.dream("init", "claude", "--remove"); r.code != 0 || !strings.Contains(r.stdout, "nothing to remove") {
		t.Fatalf("second remove: %s", r)
	}

	if r := w.dream("init", "claude", "--project"); r.code != 0 {
		t.Fatalf("--project: %s", r)
	}
	installedCommand(t, filepath.Join(w.repo, ".claude", "settings.json"), "SessionEnd")

	broken := "{\n  \"model\": \"opus\",\n}\n"
	local := filepath.Join(w.repo, ".claude", "settings.local.json")
	os.WriteFile(local, []byte(broken), 0o644)
	r = w.dream("init", "claude", "--local")
	if r.code != exitUsage || !strings.Contains(r.stderr, "trailing comma") || !strings.Contains(r.stderr, "line 3") {
		t.Fatalf("broken file: %s", r)
	}
	if b, _ := os.ReadFile(local); string(b) != broken {
		t.Fatal("a refused file was changed")
	}
}

// TestInitNanobot: nanobot gets instructions and a warning that its own
// Dream is on (Codex's init is TestInitCodexTrust).
func TestInitNanobot(t *testing.T) {
	t.Parallel()
	n := newHostWorld(t, "nanobot")
	copyTree(t, filepath.Join(fixtureSrc, "nanobot", "home"), n.home, n)
	r := n.dream("init", "nanobot")
	if r.code != 0 || !strings.Contains(r.stdout, "SOUL.md, USER.md and memory/MEMORY.md") || !strings.Contains(r.stdout, "warning: nanobot's own Dream runs every 2h") {
		t.Fatalf("nanobot: %s", r)
	}
}

// TestInitRenamedBinary: dream's hook is recognised by what it runs, not by
// the file's name. Installed from dream-linux-amd64, a second init adds no
// second hook; init from a copy that moved points the one hook at it;
// doctor says when the binary the hook runs is gone; --remove from any
// dream binary gives the file back byte for byte and drops the backup.
func TestInitRenamedBinary(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude")
	path := filepath.Join(w.home, ".claude", "settings.json")
	if err := os.WriteFile(path, []byte(userSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	copyBin := func(dir, name string) string {
		mustMkdir(t, dir)
		p := filepath.Join(dir, name)
		writeExecutable(t, p, exe)
		return p
	}
	run := func(bin string, args ...string) result {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = w.env, w.repo
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		return result{code, out.String(), errb.String()}
	}
	release := copyBin(filepath.Join(w.root, "Downloads"), "dream-linux-amd64")
	for i := 0; i < 2; i++ {
		if r := run(release, "init", "claude"); r.code != 0 {
			t.Fatalf("init %d: %s", i, r)
		}
	}
	if got := installedCommand(t, path, "SessionEnd"); !strings.HasPrefix(got, release+" hook") {
		t.Fatalf("hook runs %q", got)
	}
	if r := run(release, "doctor", "--host", "claude"); !strings.Contains(r.stdout, "ok    hook         installed in "+path) {
		t.Fatalf("doctor does not see the hook of dream-linux-amd64:\n%s", r.stdout)
	}

	moved := copyBin(filepath.Join(w.root, "bin"), "dr")
	os.Remove(release)
	r := run(moved, "doctor", "--host", "claude")
	if !strings.Contains(r.stdout, "runs "+release+", which no longer exists") || !strings.Contains(r.stdout, "fix: dream init claude") {
		t.Fatalf("doctor does not say the hook's binary is gone:\n%s", r.stdout)
	}
	r = run(moved, "init", "claude")
	if r.code != 0 || !strings.Contains(r.stdout, "ran "+release+", which no longer exists") || !strings.Contains(r.stdout, "it now runs "+moved) {
		t.Fatalf("init from the moved binary: %s", r)
	}
	if got := installedCommand(t, path, "SessionEnd"); !strings.HasPrefix(got, moved+" hook") {
		t.Fatalf("hook runs %q", got)
	}

	r = w.dream("init", "claude", "--remove")
	if r.code != 0 || !strings.Contains(r.stdout, "byte for byte") {
		t.Fatalf("remove: %s", r)
	}
	if b, _ := os.ReadFile(path); string(b) != userSettings {
		t.Fatalf("--remove did not restore the bytes:\n%q", b)
	}
	if _, err := os.Stat(path + ".dream-backup"); !os.IsNotExist(err) {
		t.Errorf("the backup outlived --remove: %v", err)
	}
}
