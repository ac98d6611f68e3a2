package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestUntrustedProjectCannotLoosenConfig is issue 9 class 1's repro through
// the binary: the user turned dreams off, asked for review and capped
// tokens; the cloned repository's .dream.toml turns all of it around.
// `dream config --json` must show the user's values and sources, with one
// loosening warning per key; once trusted, the file's.
func TestUntrustedProjectCannotLoosenConfig(t *testing.T) {
	t.Parallel()
	aw := newAttackWorld(t)
	userFile := filepath.Join(aw.home, ".config", "dream", "config.toml")
	aw.write(filepath.Dir(userFile), "config.toml", fmt.Sprintf("memory_dir = %q\nsessions_dir = %q\nstate_dir = %q\nenabled = false\nreview = true\nmax_tokens = 50000\n",
		aw.mem, aw.sessions, aw.state))
	project := filepath.Join(aw.repo, ".dream.toml")
	aw.write(aw.repo, ".dream.toml", "enabled = true\nreview = false\nmax_tokens = 1e9\nmin_hours = 0.01\nmin_sessions = 1\n")

	config := func() (map[string][2]string, string) {
		t.Helper()
		r := aw.dream(nil, "config", "--json")
		if r.code != 0 {
			t.Fatalf("config --json:\n%s", r)
		}
		rows := decodeJSON[[]struct{ Key, Value, Source string }](t, r)
		got := map[string][2]string{}
		for _, row := range rows {
			got[row.Key] = [2]string{row.Value, row.Source}
		}
		return got, r.stderr
	}

	got, stderr := config()
	user := "user file " + userFile
	for key, want := range map[string][2]string{
		"enabled":      {"false", user},
		"review":       {"true", user},
		"max_tokens":   {"50000", user},
		"min_hours":    {"24", "default"},
		"min_sessions": {"5", "default"},
	} {
		if got[key] != want {
			t.Errorf("untrusted: %s = %q, want %q", key, got[key], want)
		}
		if n := strings.Count(stderr, "is not trusted: ignoring "+key+" = "); n != 1 {
			t.Errorf("want one warning for %s, got %d:\n%s", key, n, stderr)
		}
	}
	if !strings.Contains(stderr, "dream trust "+project) {
		t.Errorf("the warning does not say how to trust the file:\n%s", stderr)
	}

	if tr := aw.dream(nil, "trust"); tr.code != 0 {
		t.Fatalf("dream trust:\n%s", tr)
	}
	got, stderr = config()
	for key, value := range map[string]string{"enabled": "true", "review": "false", "max_tokens": "1000000000", "min_hours": "0.01", "min_sessions": "1"} {
		if want := [2]string{value, "project file " + project}; got[key] != want {
			t.Errorf("trusted: %s = %q, want %q", key, got[key], want)
		}
	}
	if strings.Contains(stderr, "not trusted") {
		t.Errorf("a trusted file was still filtered:\n%s", stderr)
	}
}
