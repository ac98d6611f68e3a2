package offline

import (
	"strings"

	"github.com/dreamkit/dream/internal/memory"
)

// indexSum is what a run needs of the index: the names it mentions
// (resolved to paths, whether a plain name is a folder decided against
// the run's listing), its comments, and its local links with their lines.
type indexSum struct {
	Named    []named
	Comments []string
	Links    []linkSum
}

// linkSum is one link of the index to a memory path: its destination,
// the path it names (Target; empty when it is Dest itself) and its line.
// Links to anything else are not kept: no run looks at them.
type linkSum struct {
	Dest, Target string
	Line         int32
}

// target is the memory path the link names.
func (l linkSum) target() string {
	if l.Target == "" {
		return l.Dest
	}
	return l.Target
}

// summarizeIndex reads what indexSum keeps from a parsed index.
func summarizeIndex(f *file) *indexSum {
	d := f.doc
	x := &indexSum{Comments: d.Comments}
	// Each name once (a pointer names its file in its link and again in
	// its text): the names are a set to the runs that read them.
	seen := map[named]bool{}
	name := func(raw string) {
		if n, ok := resolveName(raw); ok && !seen[n] {
			seen[n] = true
			x.Named = append(x.Named, n)
		}
	}
	for _, l := range d.Links {
		name(l.Dest)
		line := 0
		if len(f.src) > 0 {
			line = d.LineOf(min(l.Span.Start, len(f.src)-1))
		}
		rel, ok := memory.LocalTarget(l.Dest)
		if !ok {
			continue
		}
		ls := linkSum{Dest: l.Dest, Line: int32(line)}
		if rel != l.Dest {
			ls.Target = rel
		}
		x.Links = append(x.Links, ls)
	}
	for _, c := range d.CodeSpans {
		name(c)
	}
	for _, b := range bareNames(string(f.src)) {
		name(b)
	}
	return x
}

// bareNames are the words of text that may name a memory file or folder:
// naming a file in any way, code included, is a decision about it.
func bareNames(text string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' || r == ')' || r == '[' || r == ']' || r == '<' || r == '>' || r == '|' || r == '"' || r == '`'
	}) {
		if t := strings.TrimRight(tok, ".,;:!?"); strings.Contains(strings.ToLower(t), ".md") || strings.HasSuffix(t, "/") {
			out = append(out, t)
		}
	}
	return out
}

// indexSummary is the index's summary, made from its parse (once).
func (s *state) indexSummary() *indexSum {
	ix := s.index
	if ix.idx == nil {
		if ix.doc == nil {
			ix.doc = memory.ParseDoc(ix.src)
		}
		ix.idx = summarizeIndex(ix)
	}
	return ix.idx
}
