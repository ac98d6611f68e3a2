package main

import (
	"math/rand"
	"os"
	"os/exec"
	"testing"
)

// TestShellQuoteRoundTrips: every string, quoted, is one word that /bin/sh
// gives back byte for byte: spaces, quotes, globs, $, backslashes, Chinese,
// a leading tilde or dash.
func TestShellQuoteRoundTrips(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	cases := []string{"", "plain", "/tmp/my notes/memory", "it's", `a"b`, "$HOME", "`id`", "*.md", "a\\b", "~/notes",
		"-rf", "笔记 目录", "tab\there", "semi;colon", "a&b|c", "x'y'z", "!bang", "new\nline"}
	r := rand.New(rand.NewSource(1))
	alphabet := []rune("ab '\"\\$`*?[]{}~!#&;|<>()\t\n=:,./_-笔")
	for i := 0; i < 200; i++ {
		n := r.Intn(12)
		s := make([]rune, n)
		for j := range s {
			s[j] = alphabet[r.Intn(len(alphabet))]
		}
		cases = append(cases, string(s))
	}
	for _, s := range cases {
		out, err := exec.Command("/bin/sh", "-c", "printf '%s' "+shellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("shellQuote(%q) = %s: sh gave %q, %v", s, shellQuote(s), out, err)
		}
	}
	for s, want := range map[string]string{"/a/b-c_d.md": "/a/b-c_d.md", "a b": "'a b'", "it's": `'it'\''s'`} {
		if got := shellQuote(s); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
