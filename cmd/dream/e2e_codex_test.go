package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codexConfig is a hand-written Codex config.toml with the memories
// feature on.
const codexConfig = "# mine\nmodel = \"gpt-5\" # the default\n\n[features]\nmemories = true\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n"

var trustLine = regexp.MustCompile(`\[hooks\.state\."([^"]+)"\]\ntrusted_hash = "(sha256:[0-9a-f]{64})"\n`)

// TestInitCodexTrust: Codex runs only hooks its user trusted, so `dream
// init codex` records that trust as Codex's /hooks does (a table appended
// to config.toml, every other byte kept); --dry-run shows both edits and
// writes nothing; doctor tells a trusted hook from an untrusted or a
// changed one; --remove gives both files back byte for byte.
func TestInitCodexTrust(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "codex")
	codex := filepath.Join(w.home, ".codex")
	hooks, config := filepath.Join(codex, "hooks.json"), filepath.Join(codex, "config.toml")
	os.WriteFile(hooks, []byte("// mine\n{}\n"), 0o644)
	if r := w.dream("init", "codex"); r.code != exitUsage || !strings.Contains(r.stderr, "comments") {
		t.Fatalf("codex with comments: %s", r)
	}
	os.Remove(hooks)
	os.WriteFile(config, []byte(codexConfig), 0o600)

	r := w.dream("init", "codex", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, `+      {"hooks": [{"type": "command"`) || !strings.Contains(r.stdout, "+trusted_hash = ") {
		t.Fatalf("dry run: %s", r)
	}
	if _, err := os.Stat(hooks); err == nil {
		t.Fatal("--dry-run wrote hooks.json")
	}
	if b, _ := os.ReadFile(config); string(b) != codexConfig {
		t.Fatal("--dry-run wrote config.toml")
	}

	r = w.dream("init", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "trusted dream's Stop hook for Codex in "+config) ||
		!strings.Contains(r.stdout, "until you choose who owns it") || !strings.Contains(r.stdout, "codex app-server daemon restart") ||
		strings.Contains(r.stdout, "codex_hooks") {
		t.Fatalf("init: %s", r)
	}
	b, _ := os.ReadFile(config)
	m := trustLine.FindStringSubmatch(string(b))
	if !strings.HasPrefix(string(b), codexConfig) || m == nil || m[1] != hooks+":stop:0:0" {
		t.Fatalf("config.toml after init:\n%s", b)
	}
	trusted := string(b)
	if st, _ := os.Stat(config); st.Mode().Perm() != 0o600 {
		t.Errorf("config.toml's mode became %v", st.Mode().Perm())
	}
	if r := w.dream("init", "codex"); r.code != 0 || !strings.Contains(r.stdout, "already in") || !strings.Contains(r.stdout, "Codex already trusts") {
		t.Fatalf("second init: %s", r)
	}
	doctorHook := func() string {
		t.Helper()
		var checks []check
		r := w.dream("doctor", "--host", "codex", "--json")
		if err := json.Unmarshal([]byte(r.stdout), &checks); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, r)
		}
		for _, c := range checks {
			if c.Name == "hook" {
				return c.Status + ": " + c.Detail + " | " + c.Fix
			}
		}
		t.Fatalf("doctor has no hook check: %s", r.stdout)
		return ""
	}
	if got := doctorHook(); !strings.HasPrefix(got, "ok: ") || !strings.Contains(got, "trusted in "+config) {
		t.Errorf("doctor after init: %s", got)
	}

	// Trust taken away by hand: Codex would drop the hook, doctor says so,
	// init puts it back.
	os.WriteFile(config, []byte(codexConfig), 0o600)
	if got := doctorHook(); !strings.HasPrefix(got, "fail: ") || !strings.Contains(got, "has not trusted it") || !strings.Contains(got, "dream init codex") {
		t.Errorf("doctor without trust: %s", got)
	}
	if r := w.dream("init", "codex"); r.code != 0 || !strings.Contains(r.stdout, "trusted dream's Stop hook") {
		t.Fatalf("init after the trust was removed: %s", r)
	}
	// A trust of another version of the hook (its command changed): doctor
	// says Codex will not run it, init replaces the hash in place.
	stale := strings.Replace(trusted, m[2], "sha256:"+strings.Repeat("0", 64), 1)
	os.WriteFile(config, []byte(stale), 0o600)
	if got := doctorHook(); !strings.HasPrefix(got, "fail: ") || !strings.Contains(got, "another version") {
		t.Errorf("doctor with a stale trust: %s", got)
	}
	if r := w.dream("init", "codex"); r.code != 0 {
		t.Fatalf("init over a stale trust: %s", r)
	}
	if b, _ := os.ReadFile(config); string(b) != trusted {
		t.Errorf("the stale hash was not replaced in place:\n%s", b)
	}
	// Disabled in Codex's /hooks, or the hooks feature turned off (by its
	// name or by codex_hooks, the deprecated alias): Codex runs nothing,
	// and doctor says which line to change.
	os.WriteFile(config, []byte(trusted+"enabled = false\n"), 0o600)
	if got := doctorHook(); !strings.HasPrefix(got, "warn: ") || !strings.Contains(got, "disabled in Codex") || !strings.Contains(got, "/hooks") {
		t.Errorf("doctor with the hook disabled in Codex: %s", got)
	}
	for _, k := range []string{"hooks", "codex_hooks"} {
		os.WriteFile(config, []byte(strings.Replace(trusted, "[features]\n", "[features]\n"+k+" = false\n", 1)), 0o600)
		if got := doctorHook(); !strings.HasPrefix(got, "fail: ") || !strings.Contains(got, "hooks feature is off ("+k+" = false") || !strings.Contains(got, "remove that line") {
			t.Errorf("doctor with %s = false: %s", k, got)
		}
	}
	os.WriteFile(config, []byte(trusted), 0o600)

	r = w.dream("init", "codex", "--remove")
	if r.code != 0 || !strings.Contains(r.stdout, "removed Codex's trust of dream's hook from "+config) {
		t.Fatalf("remove: %s", r)
	}
	if b, _ := os.ReadFile(config); string(b) != codexConfig {
		t.Errorf("--remove did not restore config.toml:\n%q", b)
	}
	if _, err := os.Stat(hooks); !os.IsNotExist(err) {
		t.Errorf("hooks.json, which dream created, is still there (%v)", err)
	}
}

// TestInitCodexHome: with CODEX_HOME a symbolic link, the trust key names
// hooks.json under the resolved path, as Codex (which canonicalizes
// CODEX_HOME) keys it; an inline hooks table in config.toml is left
// alone and the user is led to Codex's own /hooks.
func TestInitCodexHome(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "codex")
	real := filepath.Join(w.root, "dotfiles", "codex")
	mustMkdir(t, real)
	link := filepath.Join(w.root, "codex-link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "CODEX_HOME="+link)
	if r := w.dream("init", "codex"); r.code != 0 {
		t.Fatalf("init: %s", r)
	}
	b, _ := os.ReadFile(filepath.Join(real, "config.toml"))
	if m := trustLine.FindStringSubmatch(string(b)); m == nil || m[1] != filepath.Join(real, "hooks.json")+":stop:0:0" {
		t.Errorf("trust key with a linked CODEX_HOME:\n%s", b)
	}

	inline := "hooks = { state = {} }\n"
	os.WriteFile(filepath.Join(real, "config.toml"), []byte(inline), 0o600)
	r := w.dream("init", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "inline table") || !strings.Contains(r.stdout, "next step: start codex, type /hooks") {
		t.Fatalf("inline hooks table: %s", r)
	}
	if b, _ := os.ReadFile(filepath.Join(real, "config.toml")); string(b) != inline {
		t.Errorf("config.toml with an inline hooks table was changed:\n%s", b)
	}
}

// TestCodexStatusNoMemory: a fresh Codex home has no memories/; status
// says why (the memories feature is off) and that there is nothing to
// dream, with exit 0, in text and JSON; doctor points at the feature.
func TestCodexStatusNoMemory(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude") // a home with no Codex in it
	r := w.dream("status", "--host", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "(does not exist yet)") || !strings.Contains(r.stdout, "next: nothing to dream yet") ||
		!strings.Contains(r.stdout, "memories feature is off") {
		t.Fatalf("status: %s", r)
	}
	var st struct {
		MemoryExists bool   `json:"memory_exists"`
		Next         string `json:"next"`
		Advice       string `json:"advice"`
	}
	r = w.dream("status", "--host", "codex", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 || st.MemoryExists || st.Next != "memory" || !strings.Contains(st.Advice, "nothing to dream") {
		t.Fatalf("status --json: %v %s", err, r)
	}
	r = w.dream("doctor", "--host", "codex")
	if !strings.Contains(r.stdout, "set memories = true under [features]") {
		t.Errorf("doctor: %s", r)
	}
}

// TestCodexOwnerAndExec: with Codex's memories feature on, dream leaves
// memories/ to Codex until codex_memory_owner says otherwise (status,
// run and the hook all say why, and nothing is written there); exec
// rollouts are counted only with codex_exec_sessions.
func TestCodexOwnerAndExec(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "codex")
	os.WriteFile(filepath.Join(w.home, ".codex", "config.toml"), []byte("[features]\nmemories = true\n"), 0o600)
	mem := w.layout.MemoryDir
	before := snapshotDir(t, mem)
	r := w.dream("status", "--host", "codex")
	if r.code != 0 || !regexp.MustCompile(`CLOSED\s+enabled\s+Codex consolidates memories/ itself`).MatchString(r.stdout) {
		t.Fatalf("status: %s", r)
	}
	r = w.dream("run", "--host", "codex", "--provider", "offline")
	if r.code != exitFailed || !strings.Contains(r.stderr, "codex_memory_owner") {
		t.Fatalf("run: %s", r)
	}
	r, _ = w.runHook(binPath+" hook --host codex", map[string]any{"hook_event_name": "Stop", "session_id": w.current, "transcript_path": w.transcript, "cwd": w.repo})
	if r.code != 0 {
		t.Fatalf("hook: %s", r)
	}
	if log, _ := os.ReadFile(filepath.Join(w.home, ".local", "state", "dream", "hook.log")); !strings.Contains(string(log), "until you choose who owns it") {
		t.Errorf("hook.log does not say why nothing started:\n%s", log)
	}
	if after := snapshotDir(t, mem); after != before {
		t.Errorf("memories/ changed though Codex owns it:\n%s\n---\n%s", before, after)
	}
	var st struct {
		Sessions int `json:"sessions_touched_since"`
	}
	count := func(env ...string) int {
		t.Helper()
		saved := w.env
		w.env = append(append([]string(nil), w.env...), env...)
		defer func() { w.env = saved }()
		r := w.dream("status", "--host", "codex", "--json", "--session", w.current)
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("%v: %s", err, r)
		}
		return st.Sessions
	}
	plain, withExec := count(), count("DREAM_CODEX_EXEC_SESSIONS=true")
	if withExec != plain+1 {
		t.Errorf("codex_exec_sessions counts %d sessions, the default %d; the fixture has one exec rollout", withExec, plain)
	}
	r = w.dream("doctor", "--host", "codex")
	if !strings.Contains(r.stdout, "codex exec run(s) not counted") {
		t.Errorf("doctor does not say exec runs are not counted: %s", r)
	}

	w.env = append(w.env, "DREAM_CODEX_MEMORY_OWNER=dream")
	if r := w.dream("run", "--host", "codex", "--provider", "offline"); r.code != 0 {
		t.Fatalf("run with codex_memory_owner = dream: %s", r)
	}
}

// snapshotDir is every file under dir with its bytes, for comparing.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(p + "\n" + string(data) + "\n")
		}
		return nil
	})
	return b.String()
}
