package memory

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// pointerRE is the pointer grammar as the regular expression it was
// matched with: the reference matchPointer is held to.
var pointerRE = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,4}[.)])\s+\[([^\]]*)\]\(\s*(?:<([^<>\n]*)>|([^)\s]*))(?:\s+"[^"]*")?\s*\)(.*)$`)

// samePointer fails t when matchPointer and pointerRE disagree on raw.
func samePointer(t *testing.T, raw string) {
	t.Helper()
	title, target, rest, ok := matchPointer(raw)
	m := pointerRE.FindStringSubmatch(raw)
	if ok != (m != nil) {
		t.Fatalf("%q: matchPointer %v, the expression %v", raw, ok, m != nil)
	}
	if ok && (title != m[1] || target != m[2]+m[3] || rest != m[4]) {
		t.Fatalf("%q: matchPointer (%q, %q, %q), the expression (%q, %q, %q)", raw, title, target, rest, m[1], m[2]+m[3], m[4])
	}
}

var pointerSeeds = []string{
	"- [Billing](billing.md) — invoices and refunds",
	"* [A](a.md)", "+ [A](a.md): hook", "1. [A](a.md)", "1234) [A](a.md)", "12345. [A](a.md)", "1.[A](a.md)",
	"  - [A]( a.md )", "- [A](<a b.md>) x", "- [A](<a\nb.md>)", "- [A](a.md \"Title\") hook", "- [A]( \"x\")",
	"- [A](a.md \"open)", "- [A](a.md)\nnext", "- [A](a.md) \r", "- [](a.md)", "- [A]()", "- [A](   )",
	"- [A](<>)", "- [A](<a>b)", "- [A](a)b)", "- [A] (a.md)", "-[A](a.md)", "- [A](a.md\t\"t\"\t) h",
	"\t-\t[A](a.md)", "\f- [A](a.md)", "\v- [A](a.md)", "- [A](a.md\"t\")", "- [A](a.md \"t\" \"u\")",
	"- [A](a.md \"t\"x)", "- [a]b](c)", "- [A](a.md \"t\n\")", "- [A](<a.md> \"t\")", "- [A](<a.md>x)",
	"- [日本](日本.md) — 部署", "- [A](\xff.md) \xfe", "", "-", "- ", "- [", "- [A", "- [A]", "- [A](",
}

// TestMatchPointer holds matchPointer to the expression on the seeds and on
// random lines built from the grammar's own pieces; FuzzMatchPointer goes
// further.
func TestMatchPointer(t *testing.T) {
	for _, s := range pointerSeeds {
		samePointer(t, s)
	}
	bits := []string{" ", "  ", "\t", "\n", "\r", "\f", "\v", "-", "*", "+", "1", "12", "12345", ".", ")", "(", "[", "]",
		"<", ">", "\"", "a", "a.md", "b c", "—", "日本", "\xff", ":"}
	rng := rand.New(rand.NewPCG(15, 7))
	matched := 0
	for range 20000 {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			// Mostly pointer-shaped, with pieces in between.
			b.WriteString([]string{"- ", "* ", "1. ", "12) ", " + "}[rng.IntN(5)])
			b.WriteString("[")
			for range rng.IntN(3) {
				b.WriteString(bits[rng.IntN(len(bits))])
			}
			b.WriteString("](")
		}
		for range rng.IntN(8) {
			b.WriteString(bits[rng.IntN(len(bits))])
		}
		if rng.IntN(2) == 0 {
			b.WriteString(")")
			for range rng.IntN(3) {
				b.WriteString(bits[rng.IntN(len(bits))])
			}
		}
		raw := b.String()
		if _, _, _, ok := matchPointer(raw); ok {
			matched++
		}
		samePointer(t, raw)
	}
	if matched < 1000 {
		t.Fatalf("only %d of the random lines were pointers", matched)
	}
}

// FuzzMatchPointer: on any line, matchPointer matches as the expression
// does, with the same groups.
func FuzzMatchPointer(f *testing.F) {
	for _, s := range pointerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		samePointer(t, raw)
	})
}

// BenchmarkMatchPointer times matchPointer against the expression (the
// baseline) on an index line of the usual shape; read ns/op of each.
//
//	go test -run=^$ -bench=MatchPointer -benchmem ./internal/memory/
func BenchmarkMatchPointer(b *testing.B) {
	line := "- [billing 12345](billing/billing_12345.md) — billing notes, part 12345"
	b.Run("expression", func(b *testing.B) {
		for b.Loop() {
			pointerRE.FindStringSubmatch(line)
		}
	})
	b.Run("matchPointer", func(b *testing.B) {
		for b.Loop() {
			matchPointer(line)
		}
	})
}
