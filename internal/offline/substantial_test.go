package offline

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// substantialWas is substantial as it was written before it counted in one
// pass: the reference the one-pass count is held to.
func substantialWas(norm string) bool {
	if len(strings.Fields(norm)) >= 3 || utf8.RuneCountInString(norm) >= 16 {
		return true
	}
	cjk := 0
	for _, r := range norm {
		if memory.IsCJK(r) {
			cjk++
		}
	}
	return cjk >= 6
}

// TestSubstantialAsItWas compares the two on random strings of words,
// white space of every kind, ideographs and broken UTF-8.
func TestSubstantialAsItWas(t *testing.T) {
	bits := []string{"a", "ab", "deploy", " ", "  ", "\t", "\n", "\u00a0", "\u0085", "\u3000", "部署", "日", "な", "한", "\xff", "—", "."}
	rng := rand.New(rand.NewPCG(15, 8))
	yes := 0
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(bits[rng.IntN(len(bits))])
		}
		s := b.String()
		if got, want := substantial(s), substantialWas(s); got != want {
			t.Fatalf("substantial(%q) = %v, was %v", s, got, want)
		}
		if substantialWas(s) {
			yes++
		}
	}
	if yes < 5000 || yes > 45000 {
		t.Fatalf("%d of 50000 substantial: the strings do not cover both sides", yes)
	}
}

// FuzzSubstantial: on any string the one-pass count says what the old one
// said.
func FuzzSubstantial(f *testing.F) {
	for _, s := range []string{"", "none", "a b", "a b c", "部署前先在预发", "部署前先在", "0123456789abcdef", "\u3000a\u3000b\u3000c", "\xff \xfe \xfd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := substantial(s), substantialWas(s); got != want {
			t.Fatalf("substantial(%q) = %v, was %v", s, got, want)
		}
	})
}
