package offline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/memory"
)

// Lead kinds, as in Lead.Kind.
const (
	KindCrossFileDuplicate = "cross_file_duplicate"
	KindNearDuplicate      = "near_duplicate"
	KindDanglingPointer    = "dangling_pointer"
	KindDrift              = "drift"
	// KindLinkedFile is a memory file that is a symbolic link: read-only
	// to a dream, which neither reads nor writes through a link.
	KindLinkedFile = "linked_file"
	// KindUnnamableFile is a memory file whose name is not UTF-8: no index
	// pointer is written for it, since no agent could open it by name.
	KindUnnamableFile = "unnamable_file"
)

// Lead is one thing the engine noticed and left for judgement.
type Lead struct {
	Kind   string `json:"kind"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Detail string `json:"detail"`
}

// Ref is a place in a memory file.
type Ref struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Pair is two memory units that say the same or almost the same thing.
type Pair struct {
	A, B       Ref
	Similarity float64 `json:"similarity"`
}

// Suspect is something a memory names that the repository no longer has.
type Suspect struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Mention string `json:"mention"`
	// Kind is "path", "file" or "identifier".
	Kind string `json:"kind"`
}

// Leads are judgement calls the engine will not make itself but can point
// the model to, so that it spends its turns deciding rather than searching.
// Each list is ranked (most likely first) and capped.
type Leads struct {
	CrossFileDuplicates []Pair    `json:"cross_file_duplicates,omitempty"`
	NearDuplicates      []Pair    `json:"near_duplicates"`
	DanglingPointers    []Ref     `json:"dangling_pointers,omitempty"`
	UndatedDates        []Ref     `json:"undated_dates,omitempty"`
	DriftSuspects       []Suspect `json:"drift_suspects"`
	// Truncated is set when the repository was too large to index fully;
	// checks that could not be completed were skipped, not guessed.
	Truncated bool `json:"truncated,omitempty"`
}

// LeadsPromptBytes is the share of a model's task prompt the leads may
// take: enough for the top of every list, small beside the memory itself.
const LeadsPromptBytes = 8000

// maxLeads caps each list of leads: past it the model gets the most likely
// ones and a count, not a flood.
const maxLeads = 200

// FindLeads reads the memory (the Claude Code layout) and walks the
// repository once. repoDir may be empty, in which case there are no drift
// suspects.
func FindLeads(ctx context.Context, memoryDir, repoDir string) (Leads, error) {
	return FindLeadsWith(ctx, Options{MemoryDir: memoryDir, RepoDir: repoDir, Layout: LayoutFor("")})
}

// FindLeadsWith is FindLeads with the layout and provenance of o.
func FindLeadsWith(ctx context.Context, o Options) (Leads, error) {
	var l Leads
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	s, err := scan(ctx, o) // records undated phrases as leads; its edits are never written
	if err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	defer s.close()
	if l, err = s.findLeads(ctx); err != nil {
		return l, err
	}
	for _, ld := range s.leads {
		if ld.Kind == KindUndatedRelativeDate && len(l.UndatedDates) < maxLeads {
			l.UndatedDates = append(l.UndatedDates, Ref{File: ld.File, Line: ld.Line, Text: ld.Detail})
		}
	}
	return l, nil
}

// findLeads computes every lead but the undated dates (which the date pass
// finds) on the memory as scanned, from the files' summaries; only the
// units of reported pairs are read again, for their text.
func (s *state) findLeads(ctx context.Context) (Leads, error) {
	var l Leads
	cross, near, err := s.pairsOf(ctx)
	if err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	if err := s.pairTexts(cross, near, &l); err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	l.DanglingPointers = s.danglingPointers()
	if s.opts.RepoDir == "" {
		return l, nil
	}
	repo, err := indexRepo(ctx, s.opts.RepoDir, defaultRepoLimits)
	if err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	l.Truncated = repo.truncated
	l.DriftSuspects = driftSuspects(s, repo)
	return l, nil
}

// pairsOf returns the cross-file and near-duplicate pairs.
func (s *state) pairsOf(ctx context.Context) (cross, near []pairRef, err error) {
	near, err = s.nearScan(ctx)
	return s.crossFileDuplicates(), near, err
}

func (s *state) lead(f *file, kind string, off int, detail string) {
	line := 0
	if len(f.src) > 0 {
		line = f.doc.LineOf(min(off, len(f.src)-1))
	}
	f.leads = append(f.leads, Lead{Kind: kind, File: f.rel, Line: line, Detail: detail})
}

// crossFileDuplicates pairs units whose text is equal in different files:
// the same words in two projects may be two facts, so only a model (or the
// user) may merge them. The first maxLeads pairs in file order are kept.
func (s *state) crossFileDuplicates() []pairRef {
	out, _ := s.crossPairs(maxLeads)
	return out
}

// crossPairs is the first limit cross-file pairs, and whether they are
// all there are.
func (s *state) crossPairs(limit int) ([]pairRef, bool) {
	// Sorted by key rather than looked up in a map: the units of a large
	// memory make a map that misses the processor's caches on every
	// access, and a radix sort is a few linear passes. The sort is stable,
	// so the first unit of each key is the first in file order, as a
	// single pass with a map of first occurrences would find it.
	var us []unitRef
	var ps []posting
	for fi, f := range s.files {
		if f.sum == nil {
			continue
		}
		for ui, u := range f.sum.Units {
			if u.Cross {
				ps = append(ps, posting{u.Key, int32(len(us))})
				us = append(us, unitRef{int32(fi), int32(ui)})
			}
		}
	}
	ps, _ = sortPostings(ps, nil)
	type later struct{ first, unit int32 }
	var found []later
	for lo := 0; lo < len(ps); {
		hi := lo + 1
		for hi < len(ps) && ps[hi].sh == ps[lo].sh {
			hi++
		}
		a := ps[lo].id
		for k := lo + 1; k < hi; k++ {
			if us[ps[k].id].file != us[a].file {
				found = append(found, later{a, ps[k].id})
			}
		}
		lo = hi
	}
	// In file order of the later unit, the first limit.
	slices.SortFunc(found, func(x, y later) int { return int(x.unit) - int(y.unit) })
	var out []pairRef
	for _, l := range found[:min(len(found), limit)] {
		out = append(out, pairRef{us[l.first], us[l.unit], 1})
	}
	return out, len(found) <= limit
}

// pairTexts reads the texts of the reported pairs: each file they name is
// read and parsed once more (its bytes as scanned, checked by hash).
func (s *state) pairTexts(cross, near []pairRef, l *Leads) error {
	need := map[int32]map[int32]string{}
	for _, ps := range [][]pairRef{cross, near} {
		for _, p := range ps {
			for _, u := range []unitRef{p.a, p.b} {
				if need[u.file] == nil {
					need[u.file] = map[int32]string{}
				}
				need[u.file][u.unit] = ""
			}
		}
	}
	for fi, units := range need {
		f := s.files[fi]
		doc := f.doc
		if doc == nil {
			src, err := s.reread(f)
			if err != nil {
				return err
			}
			doc = memory.ParseDoc(src)
		}
		for ui := range units {
			if k := int(f.sum.Units[ui].Unit); k < len(doc.Units) {
				units[ui] = doc.Units[k].Content
			}
		}
	}
	ref := func(u unitRef, text string) Ref {
		r := s.refOf(u)
		r.Text = text
		return r
	}
	for _, p := range cross {
		l.CrossFileDuplicates = append(l.CrossFileDuplicates, Pair{A: ref(p.a, clip(need[p.a.file][p.a.unit], 100)), B: ref(p.b, clip(need[p.b.file][p.b.unit], 100)), Similarity: 1})
	}
	for _, p := range near {
		l.NearDuplicates = append(l.NearDuplicates, Pair{A: ref(p.a, collapseSpace(need[p.a.file][p.a.unit])), B: ref(p.b, collapseSpace(need[p.b.file][p.b.unit])), Similarity: p.sim})
	}
	return nil
}

// danglingPointers are index links to local files that do not exist.
func (s *state) danglingPointers() []Ref {
	if s.index == nil {
		return nil
	}
	var out []Ref
	for _, l := range s.indexSummary().Links {
		if s.exists(l.target()) {
			continue
		}
		if len(out) < maxLeads {
			out = append(out, Ref{File: s.index.rel, Line: int(l.Line), Text: l.Dest})
		}
	}
	return out
}

// exists reports whether rel names a file or directory in the memory dir.
func (s *state) exists(rel string) bool {
	if _, ok := s.byRel[rel]; ok || s.dirs[rel] {
		return true
	}
	_, err := os.Lstat(filepath.Join(s.opts.MemoryDir, filepath.FromSlash(rel)))
	return err == nil
}

// Count is the number of leads of every kind.
func (l Leads) Count() int {
	return len(l.CrossFileDuplicates) + len(l.NearDuplicates) + len(l.DanglingPointers) + len(l.UndatedDates) + len(l.DriftSuspects)
}

// Markdown renders the leads for the model's task prompt, at most max bytes;
// what does not fit is counted, not silently dropped.
func (l Leads) Markdown(max int) string {
	if l.Count() == 0 {
		return ""
	}
	lines := []string{"## Leads from the offline engine\n\nThese are suspects, not verdicts: check each before acting. The offline engine changed none of them.\n"}
	if len(l.CrossFileDuplicates) > 0 {
		lines = append(lines, "\n### Same text in two files (merge only if it is the same fact, not two projects' facts)\n\n")
		for _, p := range l.CrossFileDuplicates {
			lines = append(lines, fmt.Sprintf("- %s:%d and %s:%d: %q\n", p.A.File, p.A.Line, p.B.File, p.B.Line, clip(p.A.Text, 100)))
		}
	}
	if len(l.NearDuplicates) > 0 {
		lines = append(lines, "\n### Near-duplicates (merge if they say the same thing)\n\n")
		for _, p := range l.NearDuplicates {
			lines = append(lines, fmt.Sprintf("- %s:%d and %s:%d (%.0f%% similar): %q / %q\n",
				p.A.File, p.A.Line, p.B.File, p.B.Line, 100*p.Similarity, clip(p.A.Text, 100), clip(p.B.Text, 100)))
		}
	}
	if len(l.DanglingPointers) > 0 {
		lines = append(lines, "\n### Index pointers to missing files\n\n")
		for _, r := range l.DanglingPointers {
			lines = append(lines, fmt.Sprintf("- %s:%d points to `%s`, which does not exist\n", r.File, r.Line, r.Text))
		}
	}
	if len(l.UndatedDates) > 0 {
		lines = append(lines, "\n### Relative dates whose day is unknown (date them from the sessions, or leave them)\n\n")
		for _, r := range l.UndatedDates {
			lines = append(lines, fmt.Sprintf("- %s:%d %s\n", r.File, r.Line, r.Text))
		}
	}
	if len(l.DriftSuspects) > 0 {
		lines = append(lines, "\n### Possibly drifted (named in memory, not found in the repository)\n\n")
		for _, d := range l.DriftSuspects {
			lines = append(lines, fmt.Sprintf("- %s:%d names %s `%s`\n", d.File, d.Line, d.Kind, d.Mention))
		}
	}
	if l.Truncated {
		lines = append(lines, "\nThe repository was too large to index fully; some mentions were not checked.\n")
	}
	const reserve = 48
	var b strings.Builder
	for i, s := range lines {
		room := max
		if i < len(lines)-1 {
			room -= reserve
		}
		if b.Len()+len(s) > room {
			if note := fmt.Sprintf("\n… %d more lines of leads omitted.\n", len(lines)-i); b.Len()+len(note) <= max {
				b.WriteString(note)
			}
			break
		}
		b.WriteString(s)
	}
	return b.String()
}
