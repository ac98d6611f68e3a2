package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSetTopLevelKey: consent is one line in the user's config.toml;
// every other byte stays, an existing top-level provider line is replaced
// in place, and a file where the key is written another way is refused.
func TestSetTopLevelKey(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		changed, fails      bool
	}{
		{"no file", "", "provider = \"anthropic\"\n", true, false},
		{"keys and a table", "# mine\nmin_hours = 12\n\n[prices.\"x\"]\ninput = 1\noutput = 2\n",
			"provider = \"anthropic\"\n# mine\nmin_hours = 12\n\n[prices.\"x\"]\ninput = 1\noutput = 2\n", true, false},
		{"replaced in place", "min_hours = 12\nprovider = \"offline\" # for now\nmodel = \"m\"\n",
			"min_hours = 12\nprovider = \"anthropic\"\nmodel = \"m\"\n", true, false},
		{"already so", "provider = \"anthropic\"\n", "provider = \"anthropic\"\n", false, false},
		{"quoted key", "\"provider\" = \"offline\"\n", "\"provider\" = \"offline\"\n", false, true},
		{"not TOML", "min_hours = \n", "min_hours = \n", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if tc.before != "" {
				os.WriteFile(path, []byte(tc.before), 0o600)
			}
			changed, err := setTopLevelKey(path, "provider", "anthropic")
			if (err != nil) != tc.fails || changed != tc.changed {
				t.Fatalf("setTopLevelKey = %v, %v; want changed %v, fails %v", changed, err, tc.changed, tc.fails)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.after {
				t.Errorf("file:\n%s\nwant:\n%s", got, tc.after)
			}
		})
	}
}
