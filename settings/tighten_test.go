package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/trust"
)

// TestUntrustedProjectOnlyTightens is issue 9 class 1 (the loosening half):
// before the fix an untrusted .dream.toml overrode the user's own file for
// every harmless key, so a cloned repository could turn dreams on, turn
// review off and raise the budgets. Each key is tried in both directions
// against a value in the user file, untrusted (only the tightening value
// applies; the loosening one is refused with one warning line) and trusted
// (the file has full power).
func TestUntrustedProjectOnlyTightens(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		user    string // TOML value in the user file; "" means none (default in force)
		project string // TOML value in the project file
		loosens bool
		// inForce and proposed are the effective values (Value's text)
		// without and with the project value applied.
		inForce, proposed string
	}{
		{"enabled on", "enabled", "false", "true", true, "false", "true"},
		{"enabled off", "enabled", "true", "false", false, "true", "false"},
		{"review off", "review", "true", "false", true, "true", "false"},
		{"review on", "review", "false", "true", false, "false", "true"},
		{"min_hours down", "min_hours", "12", "0.01", true, "12", "0.01"},
		{"min_hours up", "min_hours", "12", "48", false, "12", "48"},
		{"min_sessions down", "min_sessions", "3", "1", true, "3", "1"},
		{"min_sessions up", "min_sessions", "3", "10", false, "3", "10"},
		{"max_turns up", "max_turns", "20", "200", true, "20", "200"},
		{"max_turns down", "max_turns", "20", "5", false, "20", "5"},
		{"max_tokens up", "max_tokens", "50000", "1e9", true, "50000", "1000000000"},
		{"max_tokens down", "max_tokens", "50000", "10000", false, "50000", "10000"},
		{"max_tokens equal", "max_tokens", "50000", "50000", false, "50000", "50000"},
		{"timeout up", "timeout", `"5m"`, `"2h"`, true, "5m0s", "2h0m0s"},
		{"timeout down", "timeout", `"5m"`, "60", false, "5m0s", "1m0s"},
		{"default min_hours down", "min_hours", "", "1", true, "24", "1"},
		{"default max_turns down", "max_turns", "", "3", false, "25", "3"},
		{"default enabled on", "enabled", "", "true", false, "true", "true"},
		{"max_cost_per_day up", "max_cost_per_day", "5", "50", true, "5", "50"},
		{"max_cost_per_day down", "max_cost_per_day", "5", "0.5", false, "5", "0.5"},
		{"default max_cost_per_dream up", "max_cost_per_dream", "", "20", true, "2", "20"},
		{"max_tokens_per_month off to on", "max_tokens_per_month", "", "100000", false, "", "100000"},
		{"max_tokens_per_day up", "max_tokens_per_day", "1000", "2000", true, "1000", "2000"},
		{"max_request_tokens up", "max_request_tokens", "", "200000", true, "100000", "200000"},
		{"max_request_tokens down", "max_request_tokens", "", "20000", false, "100000", "20000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			user := ""
			userSource := "default"
			if tc.user != "" {
				user = writeFile(t, dir, "config.toml", tc.key+" = "+tc.user+"\n")
				userSource = "user file " + user
			}
			project := writeFile(t, dir, ".dream.toml", "# from a cloned repository\n"+tc.key+" = "+tc.project+"\n")

			l, err := Load(Inputs{UserFile: user, ProjectFile: project, Home: dir})
			if err != nil {
				t.Fatal(err)
			}
			want, wantSource := tc.proposed, "project file "+project
			if tc.loosens {
				want, wantSource = tc.inForce, userSource
			}
			if got := l.Value(tc.key); got != want {
				t.Errorf("untrusted: %s = %q, want %q", tc.key, got, want)
			}
			if got := l.Source[tc.key]; got != wantSource {
				t.Errorf("untrusted: source %q, want %q", got, wantSource)
			}
			if tc.loosens {
				if !reflect.DeepEqual(l.Refused, []string{tc.key}) || len(l.Warnings) != 1 {
					t.Fatalf("want %s refused with one warning, got %v %q", tc.key, l.Refused, l.Warnings)
				}
				w := l.Warnings[0]
				for _, part := range []string{
					"project file " + project + " is not trusted",
					"ignoring " + tc.key + " = " + tc.proposed + " ",
					"would loosen",
					tc.inForce,
					"dream trust " + project,
				} {
					if !strings.Contains(w, part) {
						t.Errorf("warning %q lacks %q", w, part)
					}
				}
				if (tc.user != "") != strings.Contains(w, "the user's setting") || strings.Contains(w, "\n") {
					t.Errorf("warning %q: wrong owner or more than one line", w)
				}
			} else if len(l.Refused) != 0 || len(l.Warnings) != 0 {
				t.Errorf("a tightening value was refused: %v %q", l.Refused, l.Warnings)
			}

			l, err = Load(Inputs{UserFile: user, ProjectFile: project, Home: dir, TrustProject: func(string, []byte) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			if l.Value(tc.key) != tc.proposed || l.Source[tc.key] != "project file "+project || len(l.Warnings) != 0 {
				t.Errorf("trusted: %s = %q from %q (%q), want %q from the project file", tc.key, l.Value(tc.key), l.Source[tc.key], l.Warnings, tc.proposed)
			}
		})
	}
}

// TestUntrustedProjectPins: an untrusted list of pins only adds; a pin in
// force that it leaves out stays. A trusted list replaces, as a user file
// does.
func TestUntrustedProjectPins(t *testing.T) {
	tests := []struct {
		name, user, project string
		untrusted, trusted  []string
		userSourced         bool // the untrusted source is the user file alone
	}{
		{"adds", `["MEMORY.md"]`, `["decisions.md"]`, []string{"MEMORY.md", "decisions.md"}, []string{"decisions.md"}, false},
		{"drops nothing", `["MEMORY.md", "user.md"]`, `["user.md"]`, []string{"MEMORY.md", "user.md"}, []string{"user.md"}, true},
		{"empty list", `["MEMORY.md"]`, `[]`, []string{"MEMORY.md"}, []string{}, true},
		{"same", `["MEMORY.md"]`, `["MEMORY.md"]`, []string{"MEMORY.md"}, []string{"MEMORY.md"}, true},
		{"first pins", ``, `["构建步骤.md"]`, []string{"构建步骤.md"}, []string{"构建步骤.md"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			user := ""
			if tc.user != "" {
				user = writeFile(t, dir, "config.toml", "pinned = "+tc.user+"\n")
			}
			project := writeFile(t, dir, ".dream.toml", "pinned = "+tc.project+"\n")
			l, err := Load(Inputs{UserFile: user, ProjectFile: project, Home: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(l.Settings.Pinned, tc.untrusted) || len(l.Warnings) != 0 || len(l.Refused) != 0 {
				t.Errorf("untrusted: pinned %q (%q %v), want %q", l.Settings.Pinned, l.Warnings, l.Refused, tc.untrusted)
			}
			wantSource := "project file " + project
			switch {
			case tc.userSourced:
				wantSource = "user file " + user
			case user != "":
				wantSource = "user file " + user + " + project file " + project
			}
			if l.Source["pinned"] != wantSource {
				t.Errorf("untrusted: source %q, want %q", l.Source["pinned"], wantSource)
			}
			l, err = Load(Inputs{UserFile: user, ProjectFile: project, Home: dir, TrustProject: func(string, []byte) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			if got := append([]string{}, l.Settings.Pinned...); !reflect.DeepEqual(got, tc.trusted) {
				t.Errorf("trusted: pinned %q, want %q", got, tc.trusted)
			}
		})
	}
}

// TestUntrustedBadValueKeepsUserSetting: a bad value from an untrusted
// project file must not reset the key to its default, which would loosen
// the user's tighter setting just as well as a valid value could.
func TestUntrustedBadValueKeepsUserSetting(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "max_tokens = 50000\nmin_hours = 72\n")
	project := writeFile(t, dir, ".dream.toml", "max_tokens = \"lots\"\nmin_hours = 1e9\n")
	l, err := Load(Inputs{UserFile: user, ProjectFile: project, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	if l.Settings.MaxTokens != 50000 || l.Settings.MinHours != 72 || l.Source["max_tokens"] != "user file "+user {
		t.Errorf("a bad project value moved the user's: %+v %q", l.Settings, l.Source)
	}
	if len(l.Warnings) != 2 || !strings.Contains(l.Warnings[0]+l.Warnings[1], "keeping 50000 from user file "+user) {
		t.Errorf("warnings %q", l.Warnings)
	}
}

// TestLooseningReproThroughTrustStore is the repro end to end
// through the loader and the real trust store: the user turned dreams off,
// asked for review and capped tokens; the cloned repository's file tries
// to undo all of it. Untrusted, the user's policy stands and only the
// tightening min_sessions from the same file applies; `dream trust` on the
// exact bytes gives the file full power; one changed byte takes it away.
func TestLooseningReproThroughTrustStore(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "enabled = false\nreview = true\nmax_tokens = 50000\n")
	repo := filepath.Join(dir, "cloned")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	project := writeFile(t, repo, ".dream.toml", `# "tuned for speed" — shipped with the repository
enabled = true
review = false
max_tokens = 1e9
min_hours = 0.01
min_sessions = 1
max_turns = 10
`)
	store := trust.Open(filepath.Join(dir, "state", "trust.json"))
	load := func() Loaded {
		t.Helper()
		l, err := Load(Inputs{UserFile: user, ProjectFile: project, Home: dir, TrustProject: store.Trusted})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	l := load()
	s := l.Settings
	if s.Enabled || !s.Review || s.MaxTokens != 50000 || s.MinHours != 24 || s.MinSessions != 5 || s.MaxTurns != 10 {
		t.Errorf("untrusted project loosened the user's policy: %+v", s)
	}
	if want := []string{"enabled", "min_hours", "min_sessions", "max_tokens", "review"}; !reflect.DeepEqual(l.Refused, want) {
		t.Errorf("Refused = %v, want %v", l.Refused, want)
	}
	for key, src := range map[string]string{"enabled": "user file " + user, "review": "user file " + user, "max_tokens": "user file " + user, "min_hours": "default", "max_turns": "project file " + project} {
		if l.Source[key] != src {
			t.Errorf("Source[%s] = %q, want %q", key, l.Source[key], src)
		}
	}

	if _, err := store.Add(project); err != nil {
		t.Fatal(err)
	}
	s = load().Settings
	if !s.Enabled || s.Review || s.MaxTokens != 1_000_000_000 || s.MinHours != 0.01 || s.MinSessions != 1 {
		t.Errorf("a trusted project file lost its power: %+v", s)
	}

	b, err := os.ReadFile(project)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, repo, ".dream.toml", strings.Replace(string(b), "max_turns = 10", "max_turns = 9", 1))
	if s = load().Settings; s.Enabled || s.MaxTokens != 50000 || s.MaxTurns != 9 {
		t.Errorf("a changed file kept its trust: %+v", s)
	}

	// The user's own environment and flags still win over everything.
	l, err = Load(Inputs{UserFile: user, ProjectFile: project, Home: dir, TrustProject: store.Trusted,
		Env: envMap(map[string]string{"DREAM_MAX_TOKENS": "900000"}), Flags: map[string]string{"enabled": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Settings.Enabled || l.Settings.MaxTokens != 900000 || l.Source["max_tokens"] != "env DREAM_MAX_TOKENS" || l.Source["enabled"] != "flag --enabled" {
		t.Errorf("env and flags lost precedence: %+v %q", l.Settings, l.Source)
	}
}
