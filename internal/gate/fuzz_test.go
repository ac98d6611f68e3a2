package gate

import (
	"strings"
	"testing"
)

// FuzzIsTranscript checks the transcript name matcher against its
// definition: a .jsonl name counts unless it is the excluded session's in
// one of the three forms, and an empty exclude excludes nothing.
func FuzzIsTranscript(f *testing.F) {
	f.Add("abc.jsonl", "abc")
	f.Add("x_abc.jsonl", "abc")
	f.Add("rollout-1-abc.jsonl", "abc")
	f.Add("abc.json", "")
	f.Fuzz(func(t *testing.T, name, exclude string) {
		got := isTranscript(name, exclude)
		want := strings.HasSuffix(name, ".jsonl")
		if want && exclude != "" {
			stem := strings.TrimSuffix(name, ".jsonl")
			if stem == exclude || strings.HasSuffix(stem, "_"+exclude) || strings.HasSuffix(stem, "-"+exclude) {
				want = false
			}
		}
		if got != want {
			t.Fatalf("isTranscript(%q, %q) = %v, want %v", name, exclude, got, want)
		}
	})
}
