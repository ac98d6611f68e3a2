package offline

import (
	"strings"
	"testing"
)

// FuzzMentions: any text yields well-formed mentions, none outside the repo.
func FuzzMentions(f *testing.F) {
	f.Add("`LoadConfig` in internal/config/loader.go and server.go")
	f.Add("`a/../../b` `x.y.z()`")
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range mentions(s) {
			if m.Mention == "" || (m.Kind != "path" && m.Kind != "file" && m.Kind != "identifier") {
				t.Fatalf("bad mention %+v from %q", m, s)
			}
			if strings.HasPrefix(m.Mention, "/") || strings.HasPrefix(m.Mention, "..") {
				t.Fatalf("mention escapes the repo: %+v", m)
			}
		}
	})
}

// FuzzMentionsPrefilter: the cheap filter in mentions (no code span and no
// ".ext" means no mention) never changes what the patterns find.
func FuzzMentionsPrefilter(f *testing.F) {
	f.Add("`LoadConfig` in internal/config/loader.go and server.go")
	f.Add("see x.Go, `y`.ts and (z.py)")
	f.Add("a.\nb")
	f.Fuzz(func(t *testing.T, s string) {
		got, want := mentions(s), mentionsUnfiltered(s)
		if len(got) != len(want) {
			t.Fatalf("%q: %+v, want %+v", s, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %+v, want %+v", s, got, want)
			}
		}
	})
}

// mentionsUnfiltered is mentions without its prefilter: every pattern run.
func mentionsUnfiltered(text string) []Suspect {
	var out []Suspect
	for _, m := range driftPatterns().codeSpan.FindAllStringSubmatch(text, -1) {
		if s, ok := classify(strings.TrimSpace(m[1])); ok {
			out = append(out, s)
		}
	}
	prose := driftPatterns().codeSpan.ReplaceAllString(text, " ")
	prose = driftPatterns().linkTarget.ReplaceAllString(prose, "]")
	prose = driftPatterns().url.ReplaceAllString(prose, " ")
	for _, m := range driftPatterns().bareFile.FindAllStringSubmatch(prose, -1) {
		if s, ok := classify(m[1]); ok {
			out = append(out, s)
		}
	}
	return out
}
