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
