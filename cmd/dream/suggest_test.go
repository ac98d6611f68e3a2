package main

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestDidYouMean(t *testing.T) {
	cmds := []string{"run", "maybe", "status", "stats", "tasks", "kill", "log", "show", "undo", "diff", "apply", "discard", "help", "history", "demo", "doctor", "daemon"}
	flags := []string{"memory-dir", "sessions-dir", "state-dir", "repo", "host", "review", "json", "limit", "since"}
	for _, tt := range []struct {
		typed      string
		candidates []string
		want       []string
	}{
		{"stauts", cmds, []string{"status", "stats"}},
		{"statsu", cmds, []string{"status", "stats"}},
		{"hlep", cmds, []string{"help"}},
		{"udno", cmds, []string{"undo"}},
		{"aply", cmds, []string{"apply"}},
		{"hist", cmds, []string{"history"}},
		{"RUN", cmds, []string{"run"}},
		{"xyzzy", cmds, nil},
		{"memroy-dir", flags, []string{"memory-dir"}},
		{"memory_dir", flags, []string{"memory-dir"}},
		{"reveiw", flags, []string{"review"}},
		{"jsno", flags, []string{"json"}},
		{"sessions", flags, []string{"sessions-dir"}},
		{"x", flags, nil},
	} {
		if got := didYouMean(tt.typed, tt.candidates); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("didYouMean(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

// FuzzEditDistance checks the distance's properties: zero exactly for equal
// strings, symmetric, at most the longer length, at least the difference of
// the lengths.
func FuzzEditDistance(f *testing.F) {
	f.Add("stauts", "status")
	f.Add("", "memory-dir")
	f.Add("記憶", "记忆")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || len(a) > 64 || len(b) > 64 {
			return
		}
		d := editDistance(a, b)
		la, lb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
		if (d == 0) != (a == b) || d != editDistance(b, a) || d > max(la, lb) || d < max(la-lb, lb-la) {
			t.Fatalf("editDistance(%q, %q) = %d", a, b, d)
		}
	})
}
