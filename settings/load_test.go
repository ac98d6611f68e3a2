package settings

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// envMap turns a map into an Env lookup.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		home      string
		wantState string
		wantUser  string
		wantConf  string
	}{
		{"home only", nil, "/h", "/h/.local/state/dream", "/h/.config/dream/config.toml", "/h/.config"},
		{"xdg set", map[string]string{"XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c"}, "/h", "/s/dream", "/c/dream/config.toml", "/c"},
		{"xdg with a trailing slash", map[string]string{"XDG_STATE_HOME": "/s/", "XDG_CONFIG_HOME": "/c/"}, "", "/s/dream", "/c/dream/config.toml", "/c"},
		{"relative xdg ignored", map[string]string{"XDG_STATE_HOME": "rel", "XDG_CONFIG_HOME": "rel"}, "/h", "/h/.local/state/dream", "/h/.config/dream/config.toml", "/h/.config"},
		{"empty xdg ignored", map[string]string{"XDG_STATE_HOME": ""}, "/h", "/h/.local/state/dream", "/h/.config/dream/config.toml", "/h/.config"},
		{"nothing known", nil, "", "", "", ""},
		{"relative xdg, no home", map[string]string{"XDG_STATE_HOME": "rel", "XDG_CONFIG_HOME": "rel"}, "", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Defaults(envMap(tc.env), tc.home)
			if d.StateDir != filepath.FromSlash(tc.wantState) {
				t.Errorf("Defaults().StateDir = %q, want %q", d.StateDir, tc.wantState)
			}
			if got := StateDir(envMap(tc.env), tc.home); got != d.StateDir {
				t.Errorf("StateDir = %q, the default state_dir %q", got, d.StateDir)
			}
			if got := ConfigHome(envMap(tc.env), tc.home); got != filepath.FromSlash(tc.wantConf) {
				t.Errorf("ConfigHome = %q, want %q", got, tc.wantConf)
			}
			if got := UserFile(envMap(tc.env), tc.home); got != filepath.FromSlash(tc.wantUser) {
				t.Errorf("UserFile = %q, want %q", got, tc.wantUser)
			}
			if !d.Enabled || d.MinHours != 24 || d.MinSessions != 5 || d.MaxTurns != 25 ||
				d.MaxTokens != 400_000 || d.Timeout != 10*time.Minute || d.Review {
				t.Errorf("unexpected defaults %+v", d)
			}
		})
	}
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "user.toml", "min_hours = 12\nmin_sessions = 3\nmax_turns = 40\nmodel = \"user-model\"\n")
	project := writeFile(t, dir, "project.toml", "min_sessions = 7\nmax_turns = 30\n")
	env := map[string]string{"DREAM_MAX_TURNS": "20", "DREAM_MODEL": "env-model"}
	tests := []struct {
		name       string
		in         Inputs
		key        string
		wantValue  string
		wantSource string
	}{
		{"default", Inputs{}, "min_hours", "24", "default"},
		{"user file over default", Inputs{UserFile: user}, "min_hours", "12", "user file " + user},
		{"project over user", Inputs{UserFile: user, ProjectFile: project}, "min_sessions", "7", "project file " + project},
		{"user kept where project is silent", Inputs{UserFile: user, ProjectFile: project}, "min_hours", "12", "user file " + user},
		{"env over project", Inputs{UserFile: user, ProjectFile: project, Env: envMap(env)}, "max_turns", "20", "env DREAM_MAX_TURNS"},
		{"env over user", Inputs{UserFile: user, Env: envMap(env)}, "model", "env-model", "env DREAM_MODEL"},
		{"flag over env", Inputs{UserFile: user, ProjectFile: project, Env: envMap(env), Flags: map[string]string{"max_turns": "9"}}, "max_turns", "9", "flag --max-turns"},
		{"flag spelled with dashes", Inputs{Flags: map[string]string{"min-hours": "2"}}, "min_hours", "2", "flag --min-hours"},
		{"empty env is unset", Inputs{UserFile: user, Env: envMap(map[string]string{"DREAM_MIN_HOURS": ""})}, "min_hours", "12", "user file " + user},
		{"missing files skipped", Inputs{UserFile: filepath.Join(dir, "nope.toml"), ProjectFile: filepath.Join(dir, "no", "pe.toml")}, "max_turns", "25", "default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Load(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Value(tc.key); got != tc.wantValue {
				t.Errorf("Value(%s) = %q, want %q", tc.key, got, tc.wantValue)
			}
			if got := l.Source[tc.key]; got != tc.wantSource {
				t.Errorf("Source[%s] = %q, want %q", tc.key, got, tc.wantSource)
			}
			if len(l.Warnings) != 0 {
				t.Errorf("unexpected warnings %q", l.Warnings)
			}
		})
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name     string
		key, val string
		want     string // the whole warning
	}{
		{"negative", "min_hours", "-3", `min_hours = "-3" from env DREAM_MIN_HOURS: must be a finite number > 0; using default 24`},
		{"zero", "min_hours", "0", `min_hours = "0" from env DREAM_MIN_HOURS: must be a finite number > 0; using default 24`},
		{"NaN", "min_hours", "NaN", `min_hours = "NaN" from env DREAM_MIN_HOURS: must be a finite number > 0; using default 24`},
		{"Inf", "min_hours", "+Inf", `min_hours = "+Inf" from env DREAM_MIN_HOURS: must be a finite number > 0; using default 24`},
		{"word", "min_hours", "abc", `min_hours = "abc" from env DREAM_MIN_HOURS: must be a finite number > 0; using default 24`},
		{"fraction for int", "min_sessions", "1.5", `min_sessions = "1.5" from env DREAM_MIN_SESSIONS: must be a whole number > 0; using default 5`},
		{"negative int", "max_turns", "-1", `max_turns = "-1" from env DREAM_MAX_TURNS: must be a whole number > 0; using default 25`},
		{"int overflow", "max_tokens", "1e30", `max_tokens = "1e30" from env DREAM_MAX_TOKENS: must be a whole number > 0; using default 400000`},
		{"NaN int", "max_tokens", "NaN", `max_tokens = "NaN" from env DREAM_MAX_TOKENS: must be a whole number > 0; using default 400000`},
		{"negative duration", "timeout", "-5m", `timeout = "-5m" from env DREAM_TIMEOUT: must be a duration > 0 such as 90s or 10m, or a number of seconds; using default 10m0s`},
		{"Inf duration", "timeout", "Inf", `timeout = "Inf" from env DREAM_TIMEOUT: must be a duration > 0 such as 90s or 10m, or a number of seconds; using default 10m0s`},
		{"bad bool", "enabled", "maybe", `enabled = "maybe" from env DREAM_ENABLED: must be true or false; using default true`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// A valid lower layer must not survive a bad higher one: the
			// warning promises the default.
			user := writeFile(t, dir, "user.toml", fmt.Sprintf("%s = %s\n", tc.key, map[string]string{
				"min_hours": "7", "min_sessions": "8", "max_turns": "9", "max_tokens": "10", "timeout": `"1m"`, "enabled": "false",
			}[tc.key]))
			l, err := Load(Inputs{UserFile: user, Env: envMap(map[string]string{EnvVar(tc.key): tc.val})})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Warnings) != 1 || l.Warnings[0] != tc.want {
				t.Fatalf("warnings = %q\nwant [%q]", l.Warnings, tc.want)
			}
			def := Loaded{Settings: Defaults(nil, "")}
			if got, want := l.Value(tc.key), def.Value(tc.key); got != want {
				t.Errorf("Value = %q, want default %q", got, want)
			}
			if l.Source[tc.key] != "default" {
				t.Errorf("Source = %q, want default", l.Source[tc.key])
			}
		})
	}
}

func TestBadValuesInFiles(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"toml negative number", "min_hours = -3", `min_hours = "-3" from user file %s: must be a finite number > 0; using default 24`},
		{"toml nan", "min_hours = nan", `min_hours = "NaN" from user file %s: must be a finite number > 0; using default 24`},
		{"toml inf", "min_hours = inf", `min_hours = "+Inf" from user file %s: must be a finite number > 0; using default 24`},
		{"toml float for int", "max_turns = 2.5", `max_turns = "2.5" from user file %s: must be a whole number > 0; using default 25`},
		{"toml array for number", "min_hours = [1, 2]", `min_hours = "[1 2]" from user file %s: must be a finite number > 0; using default 24`},
		{"toml table for string", "model = {a = 1}", `model = "map[a:1]" from user file %s: must be a single string; using default `},
		{"toml numbers in list", "pinned = [1]", `pinned = "[1]" from user file %s: must be a list of strings; using default `},
		{"unknown key", "min_hour = 3", `unknown key "min_hour" in user file %s (ignored)`},
		{"dashed key is unknown", "min-hours = 3", `unknown key "min-hours" in user file %s (ignored)`},
		{"unknown table", "[dream]\nmin_hours = 3", `unknown key "dream" in user file %s (ignored)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			user := writeFile(t, t.TempDir(), "config.toml", tc.toml+"\n")
			l, err := Load(Inputs{UserFile: user})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(tc.want, user)
			if len(l.Warnings) != 1 || l.Warnings[0] != want {
				t.Fatalf("warnings = %q\nwant [%q]", l.Warnings, want)
			}
		})
	}
}

func TestGoodValueForms(t *testing.T) {
	tests := []struct {
		key, val, want string
	}{
		{"min_hours", "0.5", "0.5"},
		{"min_hours", " 36 ", "36"},
		{"max_tokens", "1e6", "1000000"},
		{"timeout", "90s", "1m30s"},
		{"timeout", "600", "10m0s"},
		{"timeout", "1.5", "1.5s"},
		{"enabled", "off", "false"},
		{"review", "YES", "true"},
		{"pinned", "a.md;b.md\n c.md \n\n;", "a.md; b.md; c.md"},
		{"pinned", "", ""},
		{"memory_dir", "~/notes", filepath.Join("/home/u", "notes")},
		{"memory_dir", "~other/notes", "~other/notes"},
		{"provider", " openai ", "openai"},
	}
	for _, tc := range tests {
		t.Run(tc.key+"="+tc.val, func(t *testing.T) {
			l, err := Load(Inputs{Home: "/home/u", Flags: map[string]string{tc.key: tc.val}})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Warnings) != 0 {
				t.Fatalf("warnings %q", l.Warnings)
			}
			if got := l.Value(tc.key); got != tc.want {
				t.Errorf("Value = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEnvList(t *testing.T) {
	tests := []struct {
		name, env string
		want      []string
	}{
		{"semicolons", "MEMORY.md;user.md", []string{"MEMORY.md", "user.md"}},
		{"newlines", "MEMORY.md\nuser.md\n", []string{"MEMORY.md", "user.md"}},
		{"mixed and padded", " a.md ;\n b.md;;c.md ", []string{"a.md", "b.md", "c.md"}},
		{"one item", "a.md", []string{"a.md"}},
		{"only separators", ";\n;", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Load(Inputs{Env: envMap(map[string]string{"DREAM_PINNED": tc.env})})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(l.Settings.Pinned, tc.want) {
				t.Errorf("Pinned = %q, want %q", l.Settings.Pinned, tc.want)
			}
			if l.Source["pinned"] != "env DREAM_PINNED" {
				t.Errorf("Source = %q", l.Source["pinned"])
			}
		})
	}
}

func TestTOMLList(t *testing.T) {
	p := writeFile(t, t.TempDir(), ".dream.toml", "pinned = [\"MEMORY.md\", \" user.md \", \"\"]\n")
	l, err := Load(Inputs{ProjectFile: p})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"MEMORY.md", "user.md"}; !reflect.DeepEqual(l.Settings.Pinned, want) {
		t.Errorf("Pinned = %q, want %q", l.Settings.Pinned, want)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		in   func() Inputs
		want []string // substrings of the error
	}{
		{
			name: "malformed toml names file and line",
			in: func() Inputs {
				return Inputs{ProjectFile: writeFile(t, dir, "bad.toml", "min_hours = 3\nmax_turns = = 4\n")}
			},
			want: []string{"bad.toml:2:"},
		},
		{
			name: "unterminated string",
			in: func() Inputs {
				return Inputs{UserFile: writeFile(t, dir, "bad2.toml", "\n\nmodel = \"abc\n")}
			},
			want: []string{"bad2.toml:3:"},
		},
		{
			name: "config path is a directory",
			in:   func() Inputs { return Inputs{UserFile: dir} },
			want: []string{dir, "is a directory"},
		},
		{
			name: "unknown flag",
			in:   func() Inputs { return Inputs{Flags: map[string]string{"min_hourz": "1"}} },
			want: []string{"--min-hourz"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.in())
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestValueUnknownKey(t *testing.T) {
	if got := (Loaded{}).Value("nope"); got != "" {
		t.Errorf("Value(nope) = %q", got)
	}
}

// TestConfigGolden renders what `dream config` shows for a layered setup and
// compares it with testdata/config.golden; run with -update to rewrite.
func TestConfigGolden(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "min_hours = 12\nprovider = \"anthropic\"\npinned = [\"MEMORY.md\"]\n")
	// Untrusted: min_hours tightens and applies, min_sessions would loosen
	// and is refused, the pin is added to the user's.
	project := writeFile(t, dir, ".dream.toml", "min_hours = 48\nmin_sessions = 3\npinned = [\"decisions.md\"]\nbogus = 1\n")
	l, err := Load(Inputs{
		UserFile:    user,
		ProjectFile: project,
		Home:        "/home/u",
		Env:         envMap(map[string]string{"DREAM_MODEL": "claude-x", "DREAM_MAX_TURNS": "0"}),
		Flags:       map[string]string{"timeout": "90"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range Keys() {
		src := strings.ReplaceAll(l.Source[k.Name], dir, "$DIR")
		fmt.Fprintf(&b, "%-13s %-28q %s\n", k.Name, l.Value(k.Name), src)
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", strings.ReplaceAll(w, dir, "$DIR"))
	}
	golden := filepath.Join("testdata", "config.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", golden, b.String(), want)
	}
}

func TestKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Keys() {
		if k.Name == "" || k.Help == "" || seen[k.Name] {
			t.Errorf("bad or duplicate key %+v", k)
		}
		seen[k.Name] = true
	}
	want := []string{"enabled", "min_hours", "min_sessions", "max_turns", "max_tokens", "timeout", "provider", "model", "base_url", "host", "memory_dir", "sessions_dir", "repo", "state_dir", "pinned", "max_loss", "max_untraced_deletions", "review",
		"lock", "etcd_endpoints", "etcd_ca_cert", "etcd_cert", "etcd_key", "etcd_username", "etcd_password", "lock_prefix", "lock_ttl", "sync_remote", "sync_branch", "codex_exec_sessions", "codex_memory_owner",
		"max_cost_per_dream", "max_cost_per_day", "max_cost_per_month", "max_tokens_per_day", "max_tokens_per_month", "max_request_tokens", "prices"}
	for _, k := range want {
		if !seen[k] {
			t.Errorf("missing key %s", k)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("got %d keys, want %d", len(seen), len(want))
	}
}
