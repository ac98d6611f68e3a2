package settings

import (
	"errors"
	"strings"
	"testing"
)

// TestStrictFlags: under StrictFlags a bad flag value is an error naming
// the flag with two dashes; the same value from the environment still
// warns and falls back, as documented.
func TestStrictFlags(t *testing.T) {
	for _, tt := range []struct{ key, value, want string }{
		{"min_hours", "abc", "--min-hours"},
		{"min_hours", "-3", "--min-hours"},
		{"min_sessions", "1.5", "--min-sessions"},
		{"max_turns", "99999999", "at most"},
		{"timeout", "ten minutes", "--timeout"},
		{"timeout", "9999h", "at most"},
		{"max_tokens", "NaN", "--max-tokens"},
	} {
		_, err := Load(Inputs{Flags: map[string]string{tt.key: tt.value}, StrictFlags: true})
		var fe *FlagValueError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) || fe.Value != tt.value {
			t.Errorf("--%s %q strict: err %v, want a FlagValueError containing %q", tt.key, tt.value, err, tt.want)
		}
		l, err := Load(Inputs{Flags: map[string]string{tt.key: tt.value}})
		if err != nil || len(l.Warnings) != 1 || l.Source[tt.key] != "default" {
			t.Errorf("--%s %q lenient: err %v warnings %q source %q", tt.key, tt.value, err, l.Warnings, l.Source[tt.key])
		}
		env := func(k string) (string, bool) { return tt.value, k == EnvVar(tt.key) }
		l, err = Load(Inputs{Env: env, StrictFlags: true})
		if err != nil || len(l.Warnings) != 1 || l.Source[tt.key] != "default" {
			t.Errorf("env %s=%q under StrictFlags: err %v warnings %q source %q", EnvVar(tt.key), tt.value, err, l.Warnings, l.Source[tt.key])
		}
	}
	l, err := Load(Inputs{Flags: map[string]string{"min_hours": "2", "timeout": "90s"}, StrictFlags: true})
	if err != nil || l.Settings.MinHours != 2 || l.Settings.Timeout.Seconds() != 90 || l.Source["min_hours"] != "flag --min-hours" {
		t.Fatalf("good flags: %v %+v %v", err, l.Settings, l.Source)
	}
}
