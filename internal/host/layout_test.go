package host

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeMemoryDirSetting: Claude Code 2.1.197's rule for its memory
// dir (gm, DFd, hUi in its cli.js), step by step: the variable beats the
// settings; policy ?? (trusted ? local ?? project : local) ?? user (the
// local settings are followed untrusted too: see claudeSettingsFile), the
// first file that sets autoMemoryDirectory deciding even when its value is
// unusable; a value is an absolute path or ~/ under the home, never
// relative; trust is the global config's hasTrustDialogAccepted for the
// git root or any folder above the session's.
func TestClaudeMemoryDirSetting(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	repo := mkdir(t, filepath.Join(tmp, "src", "app"))
	mkdir(t, filepath.Join(repo, ".git"))
	policy := filepath.Join(tmp, "etc", "managed-settings.json")
	saved := claudeManagedSettings
	claudeManagedSettings = func() string { return policy }
	t.Cleanup(func() { claudeManagedSettings = saved })

	user := filepath.Join(home, ".claude", "settings.json")
	local := filepath.Join(repo, ".claude", "settings.local.json")
	project := filepath.Join(repo, ".claude", "settings.json")
	config := filepath.Join(home, ".claude.json")
	def := filepath.Join(home, ".claude", "projects", sanitizeProjectName(repo), "memory")
	trustAt := func(dir string) string {
		return `{"projects": {"/elsewhere": {"hasTrustDialogAccepted": true}, "` + dir + `": {"hasTrustDialogAccepted": true, "allowedTools": []}}}`
	}

	steps := []struct {
		name      string
		file, src string
		env       map[string]string
		want      string
		from      string
		elsewhere string // the memory dir -p sessions use instead, if any
	}{
		{"nothing set", "", "", nil, def, "default", ""},
		{"user", user, "{\n  // where my notes live\n  \"autoMemoryDirectory\": \"~/notes/claude\"\n}\n", nil, filepath.Join(home, "notes", "claude"), "user settings", ""},
		{"project, untrusted: not followed, said", project, `{"autoMemoryDirectory": "/srv/project-mem"}`, nil, filepath.Join(home, "notes", "claude"), "user settings", "/srv/project-mem"},
		{"trusted elsewhere only", config, trustAt("/src"), nil, filepath.Join(home, "notes", "claude"), "user settings", "/srv/project-mem"},
		{"project, trusted folder", config, trustAt(repo), nil, "/srv/project-mem", "project settings " + project + " (followed: the folder is trusted)", ""},
		{"project, trusted parent", config, trustAt(filepath.Dir(repo)), nil, "/srv/project-mem", "project settings", ""},
		{"local beats project", local, `{"autoMemoryDirectory": "/srv/mem/"}`, nil, "/srv/mem", "local settings", ""},
		{"untrusted again: local still followed (only -p sessions run here)", config, `{"projects": {}}`, nil, "/srv/mem", "local settings", ""},
		{"CLAUDE_CODE_SANDBOXED trusts", "", "", map[string]string{"CLAUDE_CODE_SANDBOXED": "1"}, "/srv/mem", "local settings", ""},
		{"policy beats local", policy, `{"autoMemoryDirectory": "/policy/mem"}`, map[string]string{"CLAUDE_CODE_SANDBOXED": "1"}, "/policy/mem", "policy settings", ""},
		{"a relative value is ignored, and still decides", policy, `{"autoMemoryDirectory": "notes"}`, map[string]string{"CLAUDE_CODE_SANDBOXED": "1"}, def, "default", ""},
		{"~/.. is ignored", policy, `{"autoMemoryDirectory": "~/../other"}`, nil, def, "default", ""},
		{"variable beats all", "", "", map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "/cowork/mem"}, "/cowork/mem", "variable CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", ""},
		{"the variable takes no ~", "", "", map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "~/cowork"}, def, "default", ""},
	}
	for _, s := range steps {
		if s.file != "" {
			write(t, s.file, s.src)
		}
		l, err := Resolve("claude", repo, home, envMap(s.env))
		if err != nil {
			t.Fatal(err)
		}
		if l.MemoryDir != s.want {
			t.Errorf("%s: MemoryDir = %s, want %s", s.name, l.MemoryDir, s.want)
		}
		var from string
		for _, src := range l.Sources {
			if src.What == "memory dir" {
				from = src.From
			}
		}
		if !strings.Contains(from, s.from) {
			t.Errorf("%s: memory dir from %q, want %q", s.name, from, s.from)
		}
		var elsewhere string
		for _, e := range l.Elsewhere {
			elsewhere = e.Path
			if !strings.Contains(e.From, "claude -p") || !strings.Contains(e.From, "trust") {
				t.Errorf("%s: elsewhere says %q", s.name, e.From)
			}
		}
		if elsewhere != s.elsewhere {
			t.Errorf("%s: elsewhere = %q, want %q", s.name, elsewhere, s.elsewhere)
		}
	}
}

// TestDetect: one agent with memory here is chosen, several are an error
// naming them, none is ErrNoHost.
func TestDetect(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	repo := mkdir(t, filepath.Join(tmp, "src", "app"))
	env := envMap(nil)
	if _, err := Choose(repo, home, env); !errors.Is(err, ErrNoHost) {
		t.Fatalf("empty home: %v", err)
	}
	write(t, filepath.Join(home, ".claude", "projects", sanitizeProjectName(repo), "memory", "MEMORY.md"), "# Memory\n")
	l, err := Choose(repo, home, env)
	if err != nil || l.Host != "claude" {
		t.Fatalf("claude only: %v %v", l.Host, err)
	}
	// Gemini's assumed slug for an unregistered path is not "memory here".
	mkdir(t, filepath.Join(home, ".gemini", "tmp", "app", "memory"))
	if l, err := Choose(repo, home, env); err != nil || l.Host != "claude" {
		t.Fatalf("unregistered gemini counted: %v %v", l.Host, err)
	}
	// Codex memory that names another repository only is not this one's.
	write(t, filepath.Join(home, ".codex", "memories", "MEMORY.md"), "---\nrollout_summary_files:\n  - a.md (cwd=/elsewhere, updated_at=2026-01-01T00:00:00Z)\ndescription: x\nkeywords: y\n---\n\n- z\n")
	if l, err := Choose(repo, home, env); err != nil || l.Host != "claude" {
		t.Fatalf("codex for another repo counted: %v %v", l.Host, err)
	}
	write(t, filepath.Join(home, ".codex", "memories", "MEMORY.md"), "---\nrollout_summary_files:\n  - a.md (cwd="+repo+", updated_at=2026-01-01T00:00:00Z)\ndescription: x\nkeywords: y\n---\n\n- z\n")
	_, err = Choose(repo, home, env)
	var amb *ErrAmbiguous
	if !errors.As(err, &amb) || strings.Join(amb.Hosts, ",") != "claude,codex" || !strings.Contains(err.Error(), "--host") {
		t.Fatalf("two agents: %v", err)
	}
}

// TestCheckEdit: what each layout lets a dream do to each file.
func TestCheckEdit(t *testing.T) {
	codex, _ := Resolve("codex", "", "/home/u", envMap(nil))
	gemini, _ := Resolve("gemini", "/src/app", "/home/u", envMap(nil))
	geminiOld, _ := Resolve("gemini", "/src/app", "/home/u", envMap(map[string]string{"PATH": fakeGemini(t, "0.39.1")}))
	nanobot, _ := Resolve("nanobot", "", "/home/u", envMap(nil))
	block := "---\nrollout_summary_files:\n  - a.md (success, cwd=/src/app, updated_at=2026-11-28T11:02:13Z)\ndescription: d\nkeywords: k\n---\n\n- one\n- one\n- two\n"
	global := "/home/u/.gemini/GEMINI.md"
	section := "# Mine\n\nkeep this\n\n## Gemini Added Memories\n- a\n- a\n\n## Style\n\n- wrap at 100\n"
	cases := []struct {
		name          string
		l             Layout
		rel           string
		before, after string
		wantErr       string
	}{
		{"codex body edit", codex, "MEMORY.md", block, strings.Replace(block, "- one\n- one\n", "- one\n", 1), ""},
		{"codex header line lost", codex, "MEMORY.md", block, strings.Replace(block, "rollout_summary_files:\n", "", 1), "could no longer load"},
		{"codex header changed", codex, "MEMORY.md", block, strings.Replace(block, "keywords: k", "keywords: k, more", 1), "header changed"},
		{"codex block merged away", codex, "MEMORY.md", block + block, block, "blocks became"},
		{"codex generated file", codex, "raw_memories.md", "# Raw\n", "# Raw\n\nmore\n", "not in the agent's writable set"},
		{"codex rollout summary", codex, "rollout_summaries/x.md", "a\n", "b\n", "not in the agent's writable set"},
		{"codex summary deleted", codex, "memory_summary.md", "## user profile\n", "", "may not be deleted"},
		{"gemini 0.39 section edit", geminiOld, global, section, strings.Replace(section, "- a\n- a\n", "- a\n", 1), ""},
		{"gemini 0.39 outside the section", geminiOld, global, section, strings.Replace(section, "keep this", "changed", 1), "only the"},
		{"gemini 0.39 section removed", geminiOld, global, section, "# Mine\n", "section"},
		{"gemini 0.39 credentials", geminiOld, "/home/u/.gemini/oauth_creds.json", "{}", "{\"x\":1}", "not in the agent's writable set"},
		{"gemini 0.39 sibling note", geminiOld, "notes.md", "a\n", "b\n", "not in the agent's writable set"},
		{"gemini v2 global memory", gemini, global, section, strings.Replace(section, "keep this", "changed", 1), ""},
		{"gemini v2 sibling note", gemini, "deploys.md", "a\n", "b\n", ""},
		{"gemini v2 index deleted", gemini, "MEMORY.md", "- a\n", "", "may not be deleted"},
		{"gemini v2 note in a subfolder", gemini, "old/deploys.md", "a\n", "b\n", "not in the agent's writable set"},
		{"gemini v2 credentials", gemini, "/home/u/.gemini/oauth_creds.json", "{}", "{\"x\":1}", "not in the agent's writable set"},
		{"gemini v2 settings", gemini, "/home/u/.gemini/settings.json", "{}", "{\"x\":1}", "not in the agent's writable set"},
		{"nanobot soul", nanobot, "SOUL.md", "# Soul\n- a\n- a\n", "# Soul\n- a\n", ""},
		{"nanobot history", nanobot, "memory/history.jsonl", "{}\n", "", "not in the agent's writable set"},
		{"nanobot cursor", nanobot, "memory/.dream_cursor", "3\n", "4\n", "not in the agent's writable set"},
		{"nanobot agents file", nanobot, "AGENTS.md", "a\n", "b\n", "not in the agent's writable set"},
		{"nanobot git", nanobot, ".git/config", "a\n", "b\n", "not in the agent's writable set"},
	}
	for _, tc := range cases {
		var before, after []byte
		if tc.before != "" {
			before = []byte(tc.before)
		}
		if tc.after != "" {
			after = []byte(tc.after)
		}
		err := tc.l.CheckEdit(tc.rel, before, after)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

// TestParseCodexMemory: the block schema the consolidation template sets.
func TestParseCodexMemory(t *testing.T) {
	good := []string{
		"",
		"\n\n---\nrollout_summary_file: a.md\ndescription: d\nkeywords: k\n---\n\n- x\n",
		"---\nrollout_summary_files:\n  - a.md (success,\n    cwd=/r, updated_at=t)\n  - b.md (partial, cwd=/r, updated_at=t)\ndescription: d\nkeywords: k\n---\n- x\n---\nrollout_summary_files:\n  - c.md (cwd=/s, updated_at=t)\ndescription: e\nkeywords: l\n---\n- y\n",
	}
	for _, g := range good {
		if _, err := ParseCodexMemory(g); err != nil {
			t.Errorf("%q: %v", g, err)
		}
	}
	bad := map[string]string{
		"# Memory\n\n- x\n":                                                                "text before the first",
		"---\ndescription: d\nkeywords: k\n---\n- x\n":                                     "does not start with rollout_summary_files",
		"---\nrollout_summary_files:\n  - a.md\nkeywords: k\n---\n":                        "lacks description",
		"---\nrollout_summary_files:\n  - a.md\ndescription: d\nkeywords: k\n":             "not closed",
		"---\nrollout_summary_files:\n  - a.md\ndescription: d\nkeywords: k\nextra\n---\n": "unexpected header line",
	}
	for src, want := range bad {
		if _, err := ParseCodexMemory(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", src, err, want)
		}
	}
}

// TestNanobotKeys: stems decode to session keys only when they round-trip
// as nanobot's storage_key does; internal runs are not sessions.
func TestNanobotKeys(t *testing.T) {
	r := nanobotSessionRule()
	for name, want := range map[string]string{
		"Y2xpOmRpcmVjdA.jsonl":   "cli:direct",
		"dGVsZWdyYW06MTIz.jsonl": "telegram:123",
		"cli_direct.jsonl":       "cli_direct", // legacy safe_key name
		"abc.jsonl":              "abc",        // not a round trip: legacy
	} {
		got, ok := r.Match(0, name)
		if !ok || got != want {
			t.Errorf("Match(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"aGVhcnRiZWF0.jsonl", "ZHJlYW06MjAyNg.jsonl", "c3ViYWdlbnQ6eA.jsonl", "heartbeat.jsonl", "dream_2026.jsonl", "x.json"} {
		if _, ok := r.Match(0, name); ok {
			t.Errorf("Match(%q) counted an internal run", name)
		}
	}
	for _, cur := range []string{"cli:direct", "Y2xpOmRpcmVjdA"} {
		if !r.Same("cli:direct", cur) {
			t.Errorf("Same(cli:direct, %q) = false", cur)
		}
	}
	if !r.Same("cli_direct", "cli:direct") {
		t.Error("legacy safe name not matched to its key")
	}
}

// TestSectionSpan: the section ends at the next heading of its level or
// higher, never inside a code fence.
func TestSectionSpan(t *testing.T) {
	text := "# A\n## Gemini Added Memories\n- x\n```\n## not a heading\n```\n### sub\n- y\n## Next\n"
	s, e, ok := SectionSpan(text, "## Gemini Added Memories")
	if !ok || text[s:e] != "- x\n```\n## not a heading\n```\n### sub\n- y\n" {
		t.Fatalf("span %q %v", text[s:e], ok)
	}
	if _, _, ok := SectionSpan("# A\n", "## Gemini Added Memories"); ok {
		t.Fatal("found a missing section")
	}
	s, e, ok = SectionSpan("## Gemini Added Memories", "## Gemini Added Memories")
	if !ok || s != e {
		t.Fatalf("heading at EOF: %d %d %v", s, e, ok)
	}
}
