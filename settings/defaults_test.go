package settings

import "testing"

// TestKeyDefaultsMatchDefaults: the text default each key shows (`dream
// config`, help) parses to Defaults' value, so the numbers live in Defaults
// alone and the table cannot drift from them. The state dir's default is
// described in words (it depends on the environment) and tested in
// TestDefaults.
func TestKeyDefaultsMatchDefaults(t *testing.T) {
	def := Defaults(nil, "")
	checked := 0
	for _, s := range specs {
		if s.format == nil || s.Key.Name == "state_dir" {
			continue
		}
		var parsed Settings
		if s.Key.Default != "" {
			if err := s.apply(&parsed, raw{text: s.Key.Default}, "/h"); err != nil {
				t.Errorf("key %s: its default %q does not parse: %v", s.Key.Name, s.Key.Default, err)
				continue
			}
		}
		if got, want := s.format(&parsed), s.format(&def); got != want {
			t.Errorf("key %s: the table's default %q is %q, Defaults has %q", s.Key.Name, s.Key.Default, got, want)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d keys checked", checked)
	}
}
