package offline

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dreamkit/dream/internal/memory"
)

// indexSum is what a run needs of an index it does not change, kept in the
// cache so that a re-dream over an index of thousands of pointers need not
// parse it: the names it mentions (resolved to paths, whether a plain name
// is a folder decided against each run's listing), its
// comments, its local links with their lines, and what the budget check
// concluded for exactly these bytes. Any step that would change the index
// (a pointer to add, lines to move) parses it first, from bytes checked
// against the hash the entry was made from.
type indexSum struct {
	Named    []named
	Comments []string
	Links    []linkSum
	// BudgetKnown is set once fixBudget has run on these bytes unedited;
	// BudgetNotes are the notes it made, and BudgetMoves that it moved
	// lines (then the index is written and this summary dropped).
	BudgetKnown, BudgetMoves bool
	BudgetNotes              []string
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

// indexSummary is the index's summary: from the cache when the index was
// not read, else made from its parse (once).
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

// loadIndex reads and parses an index the scan took from the cache, before
// a step that may change it.
func (s *state) loadIndex() error {
	ix := s.index
	if ix == nil || ix.doc != nil {
		return nil
	}
	data, err := s.reread(ix)
	if err != nil {
		return err
	}
	ix.src, ix.doc, ix.unread = data, memory.ParseDoc(data), false
	return nil
}

// afterWrite brings what the cache keeps up to date with the files the run
// wrote: the pairs (pairsAfterWrite) and the written index's own summary,
// so that the dream right after this one neither finds the pairs again
// nor parses the index.
func (s *state) afterWrite(ctx context.Context, touched []string) error {
	if s.opts.CacheFile == "" || len(touched) == 0 {
		return nil
	}
	// The two are independent (the index's summary reads only the index
	// and the options): on two processors, side by side.
	var wg sync.WaitGroup
	var idx *indexSum
	ix := s.index
	if ix != nil && ix.exists && ix.idx == nil && ix.sum != nil && slices.Contains(touched, ix.rel) {
		wg.Go(func() { idx = s.writtenIndexSum(ix) })
	}
	err := s.pairsAfterWrite(ctx, touched)
	wg.Wait()
	if idx != nil {
		ix.idx = idx
	}
	return err
}

// writtenIndexSum is the summary of the index as the run wrote it, with
// the budget check's outcome for exactly those bytes: the check run on
// them alone, in a state of their own, as the next run would run it on
// the index unedited (its outcome depends on the index's bytes only). The
// bytes are read back and must hash as written; nil when they cannot be.
func (s *state) writtenIndexSum(ix *file) *indexSum {
	var data []byte
	var err error
	if s.opts.WriteDir != "" {
		if s.out == nil {
			return nil
		}
		data, err = s.out.ReadFile(filepath.FromSlash(ix.rel))
	} else {
		data, _, err = s.reader.ReadFile(ix.rel)
	}
	if err != nil || sha256.Sum256(data) != ix.hash {
		return nil
	}
	g := &file{rel: ix.rel, src: data, doc: memory.ParseDoc(data), exists: true, index: true, resident: true, mode: ix.mode}
	g.idx = summarizeIndex(g)
	t := &state{opts: s.opts, byRel: map[string]*file{}, dirs: s.dirs, reader: s.reader, roles: s.roles}
	t.addFile(g)
	t.index = g
	if err := t.fixBudget(); err != nil || !g.idx.BudgetKnown {
		return nil
	}
	return g.idx
}
