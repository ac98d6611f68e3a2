package jobs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/prompt"
	"github.com/dreamkit/dream/settings"
)

// world is a home, a repository and the user's settings.
type world struct {
	home, repo string
	base       settings.Settings
}

func newWorld(t *testing.T) world {
	t.Helper()
	root := t.TempDir()
	w := world{home: filepath.Join(root, "home"), repo: filepath.Join(root, "repo")}
	for _, d := range []string{w.home, filepath.Join(w.repo, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.base = settings.Defaults(nil, w.home)
	w.base.MaxTurns, w.base.Timeout = 40, 20*time.Minute
	return w
}

func (w world) resolve(tables ...settings.JobTable) ([]Job, []string) {
	env := func(k string) (string, bool) {
		if k == "HOME" {
			return w.home, true
		}
		return "", false
	}
	return Resolve(Inputs{Settings: w.base, Tables: tables, Repo: w.repo, Home: w.home, Env: env})
}

func user(fields map[string]any) settings.JobTable {
	return settings.JobTable{Fields: fields, Source: "user file config.toml", Trusted: true}
}

func project(fields map[string]any) settings.JobTable {
	return settings.JobTable{Fields: fields, Source: "project file .dream.toml", Trusted: false}
}

func mustFind(t *testing.T, all []Job, name string) Job {
	t.Helper()
	j, ok := Find(all, name)
	if !ok {
		t.Fatalf("no job %q in %v", name, Names(all))
	}
	return j
}

func TestBuiltins(t *testing.T) {
	w := newWorld(t)
	all, warnings := w.resolve()
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	if got := strings.Join(Names(all), ","); got != "memory,health,review" {
		t.Fatalf("jobs = %s", got)
	}
	m := mustFind(t, all, Memory)
	if !m.IsMemory() || !m.Settings.Enabled || m.Settings.MinSessions != 5 {
		t.Errorf("memory = %+v", m)
	}
	h := mustFind(t, all, Health)
	if h.Settings.Enabled || h.Settings.MinHours != 168 || h.MinCommits != 20 || h.Uses != Health || h.Report() != "health.md" ||
		h.Dir != filepath.Join(w.repo, ".dream", "health") || h.Doing != "doing a code checkup" || h.Settings.MaxTurns != 40 {
		t.Errorf("health = %+v", h)
	}
	if r := mustFind(t, all, Review); r.Settings.Enabled || r.Dir == h.Dir || r.Report() != "review.md" {
		t.Errorf("review = %+v", r)
	}
}

func TestUserJob(t *testing.T) {
	w := newWorld(t)
	all, warnings := w.resolve(
		user(map[string]any{"name": "health", "enabled": true, "min_commits": int64(5)}),
		user(map[string]any{"name": "docs", "prompt": "Sync the docs of {{.RepoDir}} on {{.Today}}: {{join .Files \", \"}} {{pinned \"x\"}}",
			"dir": "~/notes/docs", "files": []any{"*.md"}, "read": []any{"repo", "transcripts"}, "watch": []any{"docs/**", "go.mod"},
			"min_hours": 6.0, "min_sessions": int64(2), "timeout": "2m", "review": true,
			"max_cost_per_dream": 0.25, "max_tokens_per_day": int64(50000)}),
	)
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	h := mustFind(t, all, Health)
	if !h.Settings.Enabled || h.MinCommits != 5 || h.Source != "built in + user file config.toml" {
		t.Errorf("health = %+v", h)
	}
	d := mustFind(t, all, "docs")
	want := Spec{Name: "docs", Prompt: d.Prompt, Dir: filepath.Join(w.home, "notes", "docs"), Files: []string{"*.md"},
		Read: []string{"repo", "transcripts"}, Watch: []string{"docs/**", "go.mod"}}
	if d.Name != want.Name || d.Dir != want.Dir || !slices.Equal(d.Files, want.Files) || !slices.Equal(d.Read, want.Read) || !slices.Equal(d.Watch, want.Watch) {
		t.Errorf("docs spec = %+v", d.Spec)
	}
	s := d.Settings
	if !s.Enabled || s.MinHours != 6 || s.MinSessions != 2 || s.Timeout != 2*time.Minute || !s.Review || s.MaxTurns != 40 {
		t.Errorf("docs settings: enabled %v min_hours %v min_sessions %v timeout %v review %v max_turns %v", s.Enabled, s.MinHours, s.MinSessions, s.Timeout, s.Review, s.MaxTurns)
	}
	// The spending ceilings the memory dream has are the job's too.
	if s.MaxCostPerDream != 0.25 || s.MaxTokensPerDay != 50000 || s.MaxCostPerDay != h.Settings.MaxCostPerDay {
		t.Errorf("docs ceilings: per dream %v, tokens per day %v, per day %v (health's %v)", s.MaxCostPerDream, s.MaxTokensPerDay, s.MaxCostPerDay, h.Settings.MaxCostPerDay)
	}
	if d.Reads(ReadMemory) || !d.Reads(ReadTranscripts) {
		t.Errorf("read scope %v", d.Read)
	}
	// The prompt parses here and renders in the prompt package, with its
	// functions (TestPromptFuncs' point: the two lists agree).
	out, err := prompt.JobTask(d.Prompt, "", prompt.JobData{Today: "2026-12-01", RepoDir: "/r", Files: []string{"a.md", "b.md"}})
	if err != nil || out != "Sync the docs of /r on 2026-12-01: a.md, b.md - x" {
		t.Errorf("rendered prompt = %q, %v", out, err)
	}
}

// TestBadJobs: each bad key is reported naming the job, the file and the
// key; the job is skipped and the next one goes on.
func TestBadJobs(t *testing.T) {
	w := newWorld(t)
	good := user(map[string]any{"name": "after", "uses": "review", "dir": ".dream/after", "files": []any{"n.md"}})
	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   string
	}{
		{"no name", map[string]any{"uses": "review"}, "every [[job]] needs a name"},
		{"memory", map[string]any{"name": "memory", "min_hours": 2.0}, "top-level keys"},
		{"bad name", map[string]any{"name": "Bad Name"}, "lower-case letters"},
		{"nothing to run", map[string]any{"name": "x", "dir": "/tmp/x"}, "nothing to run"},
		{"unknown engine", map[string]any{"name": "x", "uses": "lint", "dir": "/tmp/x"}, `uses: "lint"`},
		{"built-in engine", map[string]any{"name": "health", "uses": "review"}, "it uses \"health\""},
		{"both prompts", map[string]any{"name": "x", "prompt": "a", "prompt_file": "/etc/hostname", "dir": "/tmp/x"}, "not both"},
		{"bad template", map[string]any{"name": "x", "prompt": "{{.Today", "dir": "/tmp/x"}, "not a valid template"},
		{"unknown func", map[string]any{"name": "x", "prompt": "{{shout .Today}}", "dir": "/tmp/x"}, "not a valid template"},
		{"relative prompt file", map[string]any{"name": "x", "prompt_file": "p.md", "dir": "/tmp/x"}, "absolute path"},
		{"missing prompt file", map[string]any{"name": "x", "prompt_file": "/nonexistent/prompt.md", "dir": "/tmp/x"}, "/nonexistent/prompt.md"},
		{"no dir", map[string]any{"name": "x", "uses": "review"}, "needs its write dir"},
		{"repo itself", map[string]any{"name": "x", "uses": "review", "dir": ".", "files": []any{"a.md"}}, "the repository itself"},
		{"contains repo", map[string]any{"name": "x", "uses": "review", "dir": "..", "files": []any{"a.md"}}, "contains the repository"},
		{"git", map[string]any{"name": "x", "uses": "review", "dir": ".git/x", "files": []any{"a.md"}}, "never the repository's .git"},
		{"source glob", map[string]any{"name": "x", "uses": "review", "dir": "src", "files": []any{"*.go"}}, "path by path"},
		{"source whole", map[string]any{"name": "x", "uses": "review", "dir": "src"}, "list the files"},
		{"credentials", map[string]any{"name": "x", "uses": "review", "dir": "~/.ssh"}, "credential"},
		{"another job's dir", map[string]any{"name": "x", "uses": "review", "dir": ".dream/health", "files": []any{"a.md"}}, `job "health"'s`},
		{"read scope", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "read": []any{"home"}}, `"home"`},
		{"min_commits", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "min_commits": int64(0)}, "min_commits: must be a whole number"},
		{"min_hours", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "min_hours": -1.0}, "min_hours: must be a finite number"},
		{"timeout too long", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "timeout": "1000h"}, "timeout: must be at most"},
		{"watch", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "watch": []any{"../secrets"}}, "watch"},
		{"files absolute", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "files": []any{"/etc/passwd"}}, "files"},
		{"top-level key", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "provider": "openai"}, "provider: not a job key"},
		{"unknown key", map[string]any{"name": "x", "uses": "review", "dir": "/tmp/x", "schedule": "daily"}, "schedule: unknown job key"},
		{"not a table", map[string]any{"": "a job must be a [[job]] table, not 3"}, "not 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all, warnings := w.resolve(user(tc.fields), good)
			if len(warnings) != 1 || !strings.Contains(warnings[0], tc.want) || !strings.Contains(warnings[0], "user file config.toml") {
				t.Fatalf("warnings = %q, want one with %q", warnings, tc.want)
			}
			if name, _ := tc.fields["name"].(string); name != "" && !strings.Contains(warnings[0], `"`+name+`"`) {
				t.Errorf("the warning does not name the job: %s", warnings[0])
			}
			if _, ok := Find(all, "after"); !ok {
				t.Errorf("the next job was dropped too")
			}
			if _, ok := Find(all, "x"); ok {
				t.Errorf("the bad job was kept")
			}
			if h := mustFind(t, all, Health); h.Uses != Health || h.Settings.Enabled {
				t.Errorf("a bad table changed the built-in health: %+v", h)
			}
		})
	}
}

// TestUntrustedProject: a project that is not trusted may not define or
// widen a job, only tighten one; a trusted one may define.
func TestUntrustedProject(t *testing.T) {
	w := newWorld(t)
	mine := user(map[string]any{"name": "notes", "uses": "review", "dir": "/tmp/notes", "min_hours": 24.0, "max_turns": int64(10)})
	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   string // "" when the table applies
		check  func(Job) bool
	}{
		{"define", map[string]any{"name": "evil", "prompt": "x", "dir": "/tmp/evil"}, "ignoring [[job]] \"evil\"", nil},
		{"enable a built-in", map[string]any{"name": "health", "enabled": true}, "would loosen", nil},
		{"turn off", map[string]any{"name": "notes", "enabled": false}, "", func(j Job) bool { return !j.Settings.Enabled }},
		{"rarer", map[string]any{"name": "notes", "min_hours": 48.0, "min_commits": int64(5)}, "", func(j Job) bool { return j.Settings.MinHours == 48 && j.MinCommits == 5 }},
		{"more often", map[string]any{"name": "notes", "min_hours": 1.0}, "would loosen", nil},
		{"bigger", map[string]any{"name": "notes", "max_turns": int64(100)}, "would loosen", nil},
		{"smaller", map[string]any{"name": "notes", "max_turns": int64(3), "review": true}, "", func(j Job) bool { return j.Settings.MaxTurns == 3 && j.Settings.Review }},
		{"prompt", map[string]any{"name": "notes", "prompt": "write my key"}, "may only tighten", nil},
		{"dir", map[string]any{"name": "notes", "dir": "/home/me/.ssh"}, "may only tighten", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all, warnings := w.resolve(mine, project(tc.fields))
			notes := mustFind(t, all, "notes")
			if tc.want == "" {
				if len(warnings) > 0 || !tc.check(notes) {
					t.Fatalf("the tightening did not apply: %v %+v", warnings, notes)
				}
				return
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], tc.want) {
				t.Fatalf("warnings = %q, want %q", warnings, tc.want)
			}
			if notes.Settings.MinHours != 24 || notes.Settings.MaxTurns != 10 || !notes.Settings.Enabled || notes.Prompt != "" || notes.Dir != "/tmp/notes" {
				t.Errorf("a refused table changed the job: %+v", notes)
			}
			if _, ok := Find(all, "evil"); ok {
				t.Errorf("the untrusted project defined a job")
			}
		})
	}
	trusted := settings.JobTable{Fields: map[string]any{"name": "docs", "prompt": "x", "dir": "/tmp/docs"}, Source: "project file .dream.toml", Trusted: true}
	all, warnings := w.resolve(trusted)
	if _, ok := Find(all, "docs"); !ok || len(warnings) > 0 {
		t.Fatalf("a trusted project's job: %v %v", Names(all), warnings)
	}
}

// TestFlagsOverride: a value given on the command line wins over every
// job's own for that invocation.
func TestFlagsOverride(t *testing.T) {
	w := newWorld(t)
	w.base.Timeout = 5 * time.Minute
	env := func(string) (string, bool) { return "", false }
	all, _ := Resolve(Inputs{Settings: w.base, Repo: w.repo, Home: w.home, Env: env, Override: []string{"timeout", "provider"},
		Tables: []settings.JobTable{user(map[string]any{"name": "health", "timeout": "30m"})}})
	if h := mustFind(t, all, Health); h.Settings.Timeout != 5*time.Minute {
		t.Fatalf("health's timeout %v, want the flag's 5m", h.Settings.Timeout)
	}
}

func TestWriteScope(t *testing.T) {
	in := WriteScope([]string{"notes.md", "archive/*.md"})
	for rel, want := range map[string]bool{"notes.md": true, "archive/2026.md": true, "other.md": false, "archive/x/y.md": false, "../notes.md": false} {
		if in(rel) != want {
			t.Errorf("in scope %q = %v, want %v", rel, !want, want)
		}
	}
	if !WriteScope(nil)("anything/at/all.md") {
		t.Error("an empty scope is the whole dir")
	}
}

// TestConfigFile: [[job]] tables come through settings.Load with their
// source and trust, and "job" is no unknown key.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	userFile := filepath.Join(dir, "config.toml")
	projFile := filepath.Join(dir, ".dream.toml")
	os.WriteFile(userFile, []byte("min_hours = 12\n[[job]]\nname = \"health\"\nenabled = true\nmin_commits = 1e400\n"), 0o644)
	os.WriteFile(projFile, []byte("[[job]]\nname = \"health\"\nenabled = false\n"), 0o644)
	l, err := settings.Load(settings.Inputs{UserFile: userFile, ProjectFile: projFile, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) > 0 {
		t.Fatalf("warnings: %v", l.Warnings)
	}
	if len(l.Jobs) != 2 || !l.Jobs[0].Trusted || l.Jobs[1].Trusted || !strings.HasPrefix(l.Jobs[1].Source, "project file") {
		t.Fatalf("jobs = %+v", l.Jobs)
	}
	all, warnings := Resolve(Inputs{Settings: l.Settings, Tables: l.Jobs, Repo: dir, Home: dir, Env: func(string) (string, bool) { return "", false }})
	// The out-of-range number is refused for its job alone (quoted by
	// the tolerant decoder); the project's tightening applies.
	if len(warnings) != 1 || !strings.Contains(warnings[0], "min_commits") {
		t.Fatalf("warnings = %v", warnings)
	}
	if h := mustFind(t, all, Health); h.Settings.Enabled || h.MinCommits != 20 {
		t.Errorf("health = %+v", h)
	}
	for _, junk := range []string{"job = 3\n", "job = [1, 2]\n", "[job]\nname = \"x\"\n"} {
		os.WriteFile(userFile, []byte(junk), 0o644)
		l, err := settings.Load(settings.Inputs{UserFile: userFile, Home: dir})
		if err != nil {
			t.Fatalf("%q: %v", junk, err)
		}
		_, warnings := Resolve(Inputs{Settings: l.Settings, Tables: l.Jobs, Repo: dir, Home: dir, Env: func(string) (string, bool) { return "", false }})
		if len(warnings) == 0 {
			t.Errorf("%q: no warning", junk)
		}
	}
}

// TestPromptFuncs: every function a job's prompt may name here (the
// check at load) is one internal/prompt renders it with, so a prompt this
// package accepts does not fail at its first run for want of a function.
func TestPromptFuncs(t *testing.T) {
	for name := range templateFuncs {
		if _, err := prompt.JobTask("{{if false}}{{"+name+"}}{{end}}", "", prompt.JobData{Today: "2026-12-01"}); err != nil {
			t.Errorf("%s: accepted here, unknown to internal/prompt: %v", name, err)
		}
	}
}

// TestPromptFile: prompt_file (absolute, or ~/ under the home) is read at
// load and is the job's prompt, as an inline one would be.
func TestPromptFile(t *testing.T) {
	w := newWorld(t)
	text := "Summarise the changes to {{.RepoDir}} since {{.LastRun}}.\n"
	if err := os.WriteFile(filepath.Join(w.home, "weekly.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	all, warnings := w.resolve(user(map[string]any{"name": "weekly", "prompt_file": "~/weekly.md", "dir": "/tmp/weekly"}))
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	if j := mustFind(t, all, "weekly"); j.Prompt != text {
		t.Errorf("prompt = %q, want the file's %q", j.Prompt, text)
	}
}

// TestJobCeilingsOnlyTighten: a job's day and month ceilings count the one
// ledger every dream shares, so a job may set them below the top-level
// ones, never above (a job's max_cost_per_day = 100 once replaced the
// user's 0.30 and spent $2.92 in a day); its per-dream ceiling is its own.
func TestJobCeilingsOnlyTighten(t *testing.T) {
	w := newWorld(t)
	w.base.MaxCostPerDay, w.base.MaxCostPerMonth, w.base.MaxTokensPerDay = 0.30, 5, 100_000
	all, warnings := w.resolve(
		user(map[string]any{"name": "loose", "prompt": "x", "dir": "/tmp/loose", "max_cost_per_dream": 100.0, "max_cost_per_day": 100.0,
			"max_cost_per_month": 1000.0, "max_tokens_per_day": int64(5_000_000), "max_tokens_per_month": int64(9_000_000)}),
		user(map[string]any{"name": "tight", "prompt": "x", "dir": "/tmp/tight", "max_cost_per_day": 0.1, "max_tokens_per_day": int64(1000)}),
	)
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	loose, tight := mustFind(t, all, "loose").Settings, mustFind(t, all, "tight").Settings
	if loose.MaxCostPerDay != 0.30 || loose.MaxCostPerMonth != 5 || loose.MaxTokensPerDay != 100_000 || loose.MaxTokensPerMonth != 9_000_000 || loose.MaxCostPerDream != 100 {
		t.Errorf("a job above the top-level ceilings: day %v, month %v, tokens a day %v, a month %v, per dream %v; want 0.30, 5, 100000, 9000000 (none at the top), 100",
			loose.MaxCostPerDay, loose.MaxCostPerMonth, loose.MaxTokensPerDay, loose.MaxTokensPerMonth, loose.MaxCostPerDream)
	}
	if tight.MaxCostPerDay != 0.1 || tight.MaxTokensPerDay != 1000 {
		t.Errorf("a job below them: day %v, tokens a day %v; want its own 0.1 and 1000", tight.MaxCostPerDay, tight.MaxTokensPerDay)
	}
	if h := mustFind(t, all, Health).Settings; h.MaxCostPerDay != 0.30 {
		t.Errorf("a built-in job's day ceiling %v, want the top-level 0.30", h.MaxCostPerDay)
	}
}
