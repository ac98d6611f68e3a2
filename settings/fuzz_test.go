package settings

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseValue holds every value parser to its contract on arbitrary
// input: no panic; an accepted number is finite and > 0, an accepted int is
// whole; and what a parser accepts prints back to text it accepts again with
// the same value, so `dream config` output can be pasted into a file.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"24", "-3", "0", "NaN", "Inf", "1.5", "1e3", "abc", "90s", "10m", "600", "true", "off", "a;b\nc", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseFloat(s); err == nil {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				t.Fatalf("parseFloat(%q) accepted %v", s, v)
			}
			if again, err := parseFloat(formatFloat(v)); err != nil || again != v {
				t.Fatalf("parseFloat round trip %q: %v, %v", s, again, err)
			}
		}
		if v, err := parseInt(s); err == nil {
			if v <= 0 {
				t.Fatalf("parseInt(%q) accepted %d", s, v)
			}
		}
		if d, err := parseDuration(s); err == nil {
			if d <= 0 {
				t.Fatalf("parseDuration(%q) accepted %v", s, d)
			}
			if again, err := parseDuration(d.String()); err != nil || again != d {
				t.Fatalf("parseDuration round trip %q: %v, %v", s, again, err)
			}
		}
		if b, err := parseBool(s); err == nil {
			if again, _ := parseBool(map[bool]string{true: "true", false: "false"}[b]); again != b {
				t.Fatalf("parseBool round trip %q", s)
			}
		}
		items := parseList(s)
		for _, it := range items {
			if it == "" || it != strings.TrimSpace(it) || strings.ContainsAny(it, ";\n") {
				t.Fatalf("parseList(%q) produced item %q", s, it)
			}
		}
		if again := parseList(strings.Join(items, "; ")); len(again) != len(items) {
			t.Fatalf("parseList round trip %q: %q vs %q", s, items, again)
		}
	})
}

// FuzzParseFile feeds arbitrary text to the config file parser: it must
// return values, unknown keys or an error naming the file, never panic, and
// every value it returns must go through Load's key table without panicking.
func FuzzParseFile(f *testing.F) {
	for _, s := range []string{
		"min_hours = 12\n",
		"pinned = [\"a\", \"b\"]\n",
		"min_hours = nan\nmax_turns = 2.5\n",
		"[dream]\nx = 1\n",
		"model = \"abc\n",
		"timeout = 1979-05-27T07:32:00Z\n",
		"min_hours = 1e309\nmin_sessions = 3\n",
		"max_tokens = 1234567890123456789012345\npinned = [1e999, \"x\"]\n",
		"t = { a = -1e400 }\nmodel = \"m\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		values, unknown, _, err := parseFile("fuzz.toml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, u := range unknown {
			if _, ok := values[u]; ok {
				t.Fatalf("key %q both known and unknown", u)
			}
		}
		def := Defaults(nil, "/h")
		l := Loaded{Settings: def, Source: map[string]string{}}
		for _, s := range specs {
			if r, ok := values[s.Name]; ok {
				l.set(s, r, "fuzz", &def, "/h")
			}
		}
		for _, s := range specs {
			_ = l.Value(s.Name)
		}
	})
}
