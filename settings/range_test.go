package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutOfRangeNumbersRejectOnlyTheirKey: numbers no 64-bit type holds
// (1e309, a 25-digit integer) used to fail the TOML decode and with it the
// whole user file. Only the key is refused now, with a warning naming it;
// every other key in the file still applies.
func TestOutOfRangeNumbersRejectOnlyTheirKey(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "config.toml")
	content := `# my settings
min_hours = 1e309
max_tokens = 1234567890123456789012345
min_sessions = 7
max_turns = -1e400
pinned = ["the deploy key lives in vault", 1e999]
provider = "openai"
timeout = "20m"
`
	if err := os.WriteFile(user, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(Inputs{UserFile: user, Home: dir})
	if err != nil {
		t.Fatalf("Load refused the whole file: %v", err)
	}
	def := Defaults(nil, dir)
	s := l.Settings
	if s.MinSessions != 7 || s.Provider != "openai" || s.Timeout.Minutes() != 20 {
		t.Errorf("the good keys were lost: %+v", s)
	}
	if s.MinHours != def.MinHours || s.MaxTokens != def.MaxTokens || s.MaxTurns != def.MaxTurns || len(s.Pinned) != 0 {
		t.Errorf("out-of-range keys not reset to defaults: %+v", s)
	}
	for _, key := range []string{"min_hours", "max_tokens", "max_turns", "pinned"} {
		found := false
		for _, w := range l.Warnings {
			if strings.HasPrefix(w, key+" = ") && strings.Contains(w, "out of range") && strings.Contains(w, user) {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning naming %s as out of range in %q", key, l.Warnings)
		}
		if l.Source[key] != "default" {
			t.Errorf("source of %s = %q", key, l.Source[key])
		}
	}
}

// TestUpperBounds: every numeric key has a clear upper bound, from every
// layer, and a value past it keeps the default with a warning saying the
// bound.
func TestUpperBounds(t *testing.T) {
	tests := []struct {
		key, value, bound string
	}{
		{"min_hours", "2600000", "at most 87600"},
		{"min_hours", "87601", "at most 87600"},
		{"min_sessions", "1000001", "at most 1000000"},
		{"max_turns", "10001", "at most 10000"},
		{"max_tokens", "9223372036854775807", "at most 1000000000"},
		{"timeout", "169h", "at most 168h"},
		{"timeout", "1e9", "at most 168h"},
	}
	for _, tt := range tests {
		for _, layer := range []string{"env", "flag", "file"} {
			in := Inputs{Home: t.TempDir()}
			switch layer {
			case "env":
				in.Env = func(k string) (string, bool) {
					if k == EnvVar(tt.key) {
						return tt.value, true
					}
					return "", false
				}
			case "flag":
				in.Flags = map[string]string{tt.key: tt.value}
			case "file":
				in.UserFile = filepath.Join(in.Home, "config.toml")
				if err := os.WriteFile(in.UserFile, []byte(tt.key+" = "+tomlValue(tt.value)+"\nreview = true\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := Load(in)
			if err != nil {
				t.Fatalf("%s %s=%s: %v", layer, tt.key, tt.value, err)
			}
			def := Defaults(nil, in.Home)
			if got, want := l.Value(tt.key), (Loaded{Settings: def}).Value(tt.key); got != want {
				t.Errorf("%s %s=%s: value %s, want the default %s", layer, tt.key, tt.value, got, want)
			}
			if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], tt.bound) {
				t.Errorf("%s %s=%s: warnings %q, want one saying %q", layer, tt.key, tt.value, l.Warnings, tt.bound)
			}
		}
	}
	// At the bound is fine.
	l, err := Load(Inputs{Flags: map[string]string{"min_hours": "87600", "timeout": "168h", "max_tokens": "1000000000"}})
	if err != nil || len(l.Warnings) != 0 || l.Settings.MinHours != 87600 {
		t.Errorf("values at the bounds refused: %v %q", err, l.Warnings)
	}
}

// tomlValue writes v as TOML: numbers bare, anything else quoted.
func tomlValue(v string) string {
	for _, c := range v {
		if (c < '0' || c > '9') && c != '.' && c != 'e' {
			return `"` + v + `"`
		}
	}
	return v
}
