package offline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dreamkit/dream/internal/indexcount"
	"github.com/dreamkit/dream/internal/memory"
)

// IgnoreFile lists, one gitignore-style pattern a line, the memory files
// that must never be added to the index.
const IgnoreFile = ".dreamignore"

// fixUnindexed adds a pointer for every top-level memory file the index
// does not mention in any form: a link in any style ([..](x.md), <x.md>,
// x.md#anchor, a link to its folder), a code span (`x.md`) or the bare name
// in text. README files, files in folders (archive/, drafts/: a folder is
// the user's own filing) and files an index comment or .dreamignore names
// are never added.
func (s *state) fixUnindexed() error {
	if s.opts.Layout.Index == "" {
		return nil
	}
	// The scan decided which files need a pointer (needsPointer) and
	// built each from the file's frontmatter and first lines.
	var todo []*file
	for _, f := range s.files {
		if f.pointer != "" {
			todo = append(todo, f)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if s.index == nil {
		if _, err := os.Lstat(filepath.Join(s.opts.MemoryDir, filepath.FromSlash(s.opts.Layout.Index))); err == nil {
			// Something the listing skipped (a pipe, a device) has the
			// index's name: it is not replaced by a new index.
			s.notes = append(s.notes, fmt.Sprintf("%s is not a regular file: no index was started and %d file(s) stay unindexed", s.opts.Layout.Index, len(todo)))
			return nil
		}
		// The layout has an index and there is none yet: start it.
		s.index = &file{rel: s.opts.Layout.Index, doc: memory.ParseDoc(nil), mode: 0o644, index: true}
		s.addFile(s.index)
	}
	ptrs := make([]string, len(todo))
	for i, f := range todo {
		ptrs[i] = f.pointer
	}
	s.addPointers(ptrs)
	return nil
}

// indexable reports a file the index may point to.
func (s *state) indexable(f *file) bool {
	if f.index || strings.Contains(f.rel, "/") {
		return false
	}
	base := strings.ToLower(path.Base(f.rel))
	return base != "readme.md" && f.rel != s.opts.Layout.Index
}

// mentionSet is what the index names: files and folders.
type mentionSet struct {
	files, dirs map[string]bool
	comments    []string
}

func (m mentionSet) names(rel string) bool {
	if m.files[rel] || m.files[strings.ToLower(rel)] {
		return true
	}
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if m.dirs[d] {
			return true
		}
	}
	return false
}

// mentions collects every file and folder the index names, however written.
func (s *state) mentions() mentionSet {
	m := mentionSet{files: map[string]bool{}, dirs: map[string]bool{}}
	if s.index == nil {
		return m
	}
	add := func(n named) {
		switch n.Kind {
		case namedFile:
			m.files[n.Rel] = true
			m.files[strings.ToLower(n.Rel)] = true
		case namedDir:
			m.dirs[n.Rel] = true
		case namedOther:
			if s.dirs[n.Rel] {
				m.dirs[n.Rel] = true
			}
		}
	}
	x := s.indexSummary()
	for _, n := range x.Named {
		add(n)
	}
	for _, e := range s.index.edits {
		for _, t := range bareNames(e.text) {
			if n, ok := resolveName(t); ok {
				add(n)
			}
		}
	}
	m.comments = x.Comments
	return m
}

// named is one name the index mentions, resolved to a memory path: what
// the text says is decided once, when the index is parsed; whether a name
// that is neither a Markdown file nor written as a folder is a folder is
// decided against each run's listing.
type named struct {
	Rel  string
	Kind uint8
}

const (
	namedFile  = 1 // a Markdown file
	namedDir   = 2 // written as a folder ("notes/")
	namedOther = 3 // a folder if the memory has one of that name
)

// resolveName reads one raw mention (a link destination, a code span, a
// bare word) as named.
func resolveName(raw string) (named, bool) {
	raw = strings.TrimSpace(raw)
	raw = strings.Trim(raw, "<>\"'`*_,;:!?()[]{}")
	if raw == "" {
		return named{}, false
	}
	rel, ok := memory.LocalTarget(raw)
	if !ok {
		return named{}, false
	}
	switch {
	case strings.HasSuffix(raw, "/"):
		return named{rel, namedDir}, true
	case strings.HasSuffix(strings.ToLower(rel), ".md"):
		return named{rel, namedFile}, true
	}
	return named{rel, namedOther}, true
}

// ignorePatterns are the exclusions: every path or pattern an HTML comment
// of the index names ("<!-- archive/ is not indexed on purpose -->"), and
// the lines of .dreamignore.
func (s *state) ignorePatterns(m mentionSet) []string {
	var out []string
	for _, c := range m.comments {
		for _, tok := range strings.Fields(c) {
			tok = strings.Trim(tok, "`'\"()[],;:!?")
			if strings.ContainsAny(tok, "/*") || strings.HasSuffix(strings.ToLower(tok), ".md") {
				out = append(out, tok)
			}
		}
	}
	if data := s.readSmall(IgnoreFile); data != nil {
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
	}
	return out
}

// matchesAny applies gitignore-style patterns: "dir/" excludes a folder, a
// pattern without a slash matches the base name at any depth.
func matchesAny(patterns []string, rel string) bool {
	for _, p := range patterns {
		p = strings.TrimPrefix(p, "/")
		switch {
		case strings.HasSuffix(p, "/"):
			if strings.HasPrefix(rel, p) || strings.Contains(rel, "/"+p) {
				return true
			}
		case !strings.Contains(p, "/"):
			if ok, _ := doublestar.Match(p, path.Base(rel)); ok {
				return true
			}
		default:
			if ok, _ := doublestar.Match(p, rel); ok || strings.HasPrefix(rel, strings.TrimSuffix(p, "/**")+"/") {
				return true
			}
		}
	}
	return false
}

// addPointer inserts a pointer after the index's last pointer (or at its
// end) and records it.
func (s *state) addPointer(ptr string) { s.addPointers([]string{ptr}) }

// addPointers inserts pointers, in order, after the index's last pointer
// (or at its end), as one insertion built once, and records each.
func (s *state) addPointers(ptrs []string) {
	ix := s.index
	nl := ix.newline()
	at, prefix := s.pointerSite()
	var b strings.Builder
	for _, p := range ptrs {
		b.WriteString(p)
		b.WriteString(nl)
	}
	// An index whose last line has no line ending gets one before the
	// pointers: that line changes too, so the record names it (the loss
	// guard checks that every changed unit is named).
	from := at
	if at == len(ix.src) && len(ix.src) > 0 && !bytes.HasSuffix(ix.src, []byte("\n")) {
		from = ix.doc.LineStart(at - 1)
	}
	record := func() {
		for _, p := range ptrs {
			s.fix(ix, KindUnindexedTopic, from, at, fmt.Sprintf("added index pointer %q", p))
		}
	}
	// Several pointers at one place are one insertion, in order.
	for i, e := range ix.edits {
		if e.start == at && e.end == at {
			ix.edits[i].text += b.String()
			record()
			return
		}
	}
	if ix.splice(at, at, prefix+b.String()) {
		record()
	}
}

// pointerSite is where addPointers puts a pointer in the index as read
// (after its last pointer, else at its end) and what goes before it
// (nothing when pointers were inserted there already).
func (s *state) pointerSite() (at int, prefix string) {
	ix := s.index
	nl := ix.newline()
	at = len(ix.src)
	if s.pointerEnd == nil {
		e := lastPointerEnd(ix.doc) // once: the parse never changes, and each call scans every item
		s.pointerEnd = &e
	}
	if last := *s.pointerEnd; last >= 0 {
		at = last
	} else if len(ix.src) > 0 {
		if !bytes.HasSuffix(ix.src, []byte("\n")) {
			prefix = nl
		}
		if lastLineIsText(ix.src) {
			prefix += nl
		}
	}
	if at == len(ix.src) && len(ix.src) > 0 && !bytes.HasSuffix(ix.src, []byte("\n")) && prefix == "" {
		prefix = nl
	}
	for _, e := range ix.edits {
		if e.start == at && e.end == at {
			return at, ""
		}
	}
	return at, prefix
}

func lastLineIsText(b []byte) bool {
	t := bytes.TrimRight(b, "\r\n")
	i := bytes.LastIndexByte(t, '\n')
	return len(bytes.TrimSpace(t[i+1:])) > 0
}

// lastPointerEnd is the end of the last top-level pointer item, or -1.
func lastPointerEnd(d *memory.Doc) int {
	end := -1
	for _, u := range d.Units {
		if u.Kind == memory.UnitItem && u.Parent < 0 && isPointerItem(d, u) {
			end = u.End
		}
	}
	if end > 0 && end == len(d.Src) && !bytes.HasSuffix(d.Src, []byte("\n")) {
		return -1
	}
	return end
}

func isPointerItem(d *memory.Doc, u memory.Unit) bool {
	return memory.ParseIndexLine(0, strings.TrimRight(string(d.Src[u.Start:d.LineEnd(u.Start)]), "\r\n")).IsPointer
}

// pointerFor builds "- [Title](link) — hook" from the topic's frontmatter,
// else its first heading and first line of prose.
func pointerFor(f *file) string {
	title, hook := "", ""
	if t := f.topic; t != nil {
		title, hook = t.Name, t.Description
		if title == "" {
			title = t.Heading()
		}
	}
	if title == "" {
		title = strings.TrimSuffix(path.Base(f.rel), path.Ext(f.rel))
	}
	if hook == "" {
		for _, u := range f.doc.Units {
			if u.Kind == memory.UnitParagraph && !u.Quoted && u.Content != "" && !isBoldLabel(u.Content) {
				hook = u.Content
				break
			}
		}
	}
	return makePointer(title, f.rel, hook)
}

// makePointer formats a pointer whose link reads back as rel: characters a
// link destination would take for syntax, an escape, a fragment or a query
// are percent-encoded (memory.LocalTarget decodes them). Its text is valid
// UTF-8 whatever the topic holds: the index is loaded as text every turn.
func makePointer(title, rel, hook string) string {
	title = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(collapseSpace(stripPin(strings.ToValidUTF8(title, "\uFFFD"))))
	hook = collapseSpace(stripPin(strings.ToValidUTF8(hook, "\uFFFD")))
	p := "- [" + title + "](" + escapeDest(rel) + ")"
	if hook != "" {
		p += " — " + clip(hook, 110)
	}
	return p
}

// stripPin drops a pin marker from text copied into a pointer (the pointer
// is not the pinned fact); a marker quoted in a code span stays.
func stripPin(s string) string {
	if strings.Contains(s, "`") {
		return s
	}
	return strings.ReplaceAll(s, "<!-- pin -->", "")
}

// escapeDest percent-encodes what CommonMark or a URL reader would not keep
// in a bare link destination: white space and control bytes, bytes that
// are not UTF-8, parentheses, brackets, quotes, backslashes, backticks, a
// fragment's or query's mark, "%" itself, and a "<" that would open an
// angle-bracket destination. Elsewhere "<" and ">" are plain characters of
// a bare destination: Map<K,V>.md is written as it is named, for the agent
// that reads the index as text.
func escapeDest(rel string) string {
	var b strings.Builder
	valid := utf8.ValidString(rel)
	for i, c := range []byte(rel) {
		if c <= ' ' || c == 0x7f || c >= 0x80 && !valid || strings.IndexByte(`()[]\#?%"'`+"`", c) >= 0 || c == '<' && i == 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// fixBudget keeps the index within what its agent loads (Layout.Limit,
// counted as the agent counts), changing as little as the budget needs:
// first blank lines no block needs (after a heading or the front matter,
// or the second of two), then whole units moved verbatim to the overflow
// file: the detail nested under a pointer, then the user's own text from
// the bottom up; never pointers, headings, frontmatter, comments or pinned
// lines. Nothing is changed unless the plan brings the index within the
// limit: moving the user's words out of the index only to leave it over
// budget would hide them for nothing.
func (s *state) fixBudget() error {
	ix := s.index
	if ix == nil {
		return nil
	}
	lim := s.opts.Layout.Limit
	cur, _ := ix.render()
	if lim.Unread(cur) {
		s.notes = append(s.notes, fmt.Sprintf("%s is %d bytes on disk, over the %d bytes %s reads at all: it loads none of it; the offline engine does not shrink a file that far, a model dream or you must",
			ix.rel, len(cur), lim.MaxFileBytes, lim.Agent))
		return nil
	}
	lines, size := lim.Count(cur)
	if lim.Fits(lines, size) {
		return nil
	}
	needLines, needSize := lines-lim.MaxLines, 0
	if lim.MaxSize > 0 {
		needSize = size - lim.MaxSize
	}
	d := ix.doc
	blanks, detail, text := budgetCandidates(ix)
	overflowPointer := makePointer("Index overflow", OverflowFile, "lines moved out of the index to keep it within budget")
	var plan []budgetCand
	moves := false
	for _, c := range append(append(blanks, detail...), text...) {
		if needLines <= 0 && needSize <= 0 {
			break
		}
		if c.unit < 0 && needLines <= 0 {
			continue // a blank line is worth a line, hardly any size
		}
		if c.unit >= 0 && !moves {
			moves = true
			if !s.mentions().names(OverflowFile) {
				// The pointer to the overflow file costs what it adds
				// where it goes (a blank line before it, at the end of
				// an index with no pointers).
				at, prefix := s.pointerSite()
				head := ix.src[:at:at]
				l0, s0 := lim.Count(head)
				l1, s1 := lim.Count(append(head, prefix+overflowPointer+ix.newline()...))
				needLines += l1 - l0
				needSize += s1 - s0
			}
		}
		plan = append(plan, c)
		needLines -= c.lines
		needSize -= lim.Size(d.Src[c.start:c.end])
	}
	// Units moved for their size may have freed the lines blank lines
	// were taken for: those stay.
	for i := len(plan) - 1; i >= 0; i-- {
		if c := plan[i]; c.unit < 0 && needLines+1 <= 0 && needSize+lim.Size(d.Src[c.start:c.end]) <= 0 {
			needLines, needSize = needLines+1, needSize+lim.Size(d.Src[c.start:c.end])
			plan = append(plan[:i], plan[i+1:]...)
		}
	}
	if len(plan) == 0 || needLines > 0 || needSize > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%s is over budget (%d lines, %d %s as %s counts it; it loads %s): what is left is pointers, headings, comments and pinned lines, which the offline engine never moves; related topics need merging",
			ix.rel, lines, size, lim.Unit, lim.Agent, lim.Phrase()))
		return nil
	}
	s.applyBudgetPlan(ix, plan, moves)
	return nil
}

// budgetCand is a part of the index fixBudget may take out: a unit (with
// the blank line after it, where it sits between two blocks) or a blank
// line no block needs.
type budgetCand struct {
	start, end int
	lines      int
	unit       int // -1: a blank line
}

// budgetCandidates are what fixBudget may take out of the index, each kind
// bottom-up (the user's newest text moves first; the top of the index,
// which an agent reads first, stays): spare blank lines, the detail nested
// under a pointer, and the user's own text. Pinned lines and what this
// dream already changed are never candidates.
func budgetCandidates(ix *file) (blanks, detail, text []budgetCand) {
	d := ix.doc
	for i, u := range d.Units {
		if d.PinnedRange(u.Start, u.End) || ix.touched(u.Start, u.End) {
			continue
		}
		c := budgetCand{u.Start, u.End, lineCount(d.Src[u.Start:u.End]), i}
		if u.Parent < 0 {
			// A block moved from between two others takes the blank line
			// after it along, so that one blank line, not two, is left
			// between its neighbours.
			if le := d.LineEnd(u.End); u.End < len(d.Src) && len(bytes.TrimSpace(d.Src[u.End:le])) == 0 && len(bytes.TrimSpace(d.Src[le:])) > 0 {
				c.end, c.lines = le, c.lines+1
			}
		}
		if u.Parent >= 0 {
			p := d.Units[u.Parent]
			if p.Kind == memory.UnitItem && p.Parent < 0 && isPointerItem(d, p) && u.Start > d.LineEnd(p.Start)-1 && directChild(d, i) {
				detail = append(detail, c)
			}
			continue
		}
		switch u.Kind {
		case memory.UnitParagraph, memory.UnitCode, memory.UnitQuote:
		case memory.UnitItem:
			if isPointerItem(d, u) {
				continue
			}
		default:
			continue
		}
		text = append(text, c)
	}
	for _, r := range spareBlankLines(d) {
		if !ix.touched(r[0], r[1]) && !ix.touched(r[0]-1, r[1]) {
			blanks = append(blanks, budgetCand{r[0], r[1], 1, -1})
		}
	}
	sort.SliceStable(blanks, func(a, b int) bool { return blanks[a].start > blanks[b].start })
	sort.SliceStable(detail, func(a, b int) bool { return detail[a].unit > detail[b].unit })
	sort.SliceStable(text, func(a, b int) bool { return text[a].unit > text[b].unit })
	return blanks, detail, text
}

// applyBudgetPlan takes plan out of the index: blank lines removed, units
// moved to the overflow file (moves: there are some), with a note for what
// could not be removed or for an index still over budget.
func (s *state) applyBudgetPlan(ix *file, plan []budgetCand, moves bool) {
	d, lim := ix.doc, s.opts.Layout.Limit
	sort.Slice(plan, func(a, b int) bool { return plan[a].start < plan[b].start })
	var rs []removal
	byStart := map[int]int{}
	for _, c := range plan {
		if c.unit < 0 {
			rs = append(rs, removal{c.start, c.end, KindIndexBudget, fmt.Sprintf("removed a blank line to keep the index within %s", lim.Phrase())})
			continue
		}
		byStart[c.start] = c.unit
		rs = append(rs, removal{c.start, c.end, KindIndexBudget, fmt.Sprintf("moved %q to %s to keep the index within %s",
			clip(string(d.Src[c.start:c.end]), 100), OverflowFile, lim.Phrase())})
	}
	applied := s.applyRemovals(ix, rs)
	if len(applied) < len(rs) {
		s.notes = append(s.notes, fmt.Sprintf("%s: %d line(s) were not removed from the index because their neighbours would have merged", ix.rel, len(rs)-len(applied)))
	}
	if moves {
		s.moveToOverflow(ix, applied, byStart)
	}
	after, _ := ix.render()
	if l, n := lim.Count(after); !lim.Fits(l, n) {
		s.notes = append(s.notes, fmt.Sprintf("%s is still %d lines and %d %s as %s counts it (it loads %s): related topics need merging",
			ix.rel, l, n, lim.Unit, lim.Agent, lim.Phrase()))
	}
}

// moveToOverflow appends the units the budget fix took out of the index
// (the applied removals that byStart names) to the overflow file, under
// their heading path, and points the index at it.
func (s *state) moveToOverflow(ix *file, applied []removal, byStart map[int]int) {
	d := ix.doc
	of := s.overflow()
	var add strings.Builder
	nl := of.newline()
	lastSection := ""
	for _, r := range applied {
		i, ok := byStart[r.start]
		if !ok {
			continue // a blank line: dropped, not moved
		}
		u := d.Units[i]
		sec := "## From " + ix.rel
		if len(u.Path) > 0 {
			sec += ": " + strings.Join(u.Path, " › ")
		}
		if sec != lastSection {
			add.WriteString(nl + sec + nl + nl)
			lastSection = sec
		}
		body := string(d.Src[u.Start:u.End])
		if !strings.HasSuffix(body, "\n") {
			body += nl
		}
		add.WriteString(strings.TrimLeft(body, " \t"))
	}
	if add.Len() == 0 {
		return
	}
	at := len(of.src)
	prefix := ""
	if at > 0 && !bytes.HasSuffix(of.src, []byte("\n")) {
		prefix = nl
	}
	if !of.exists {
		at = 0
	}
	added := false
	for i, e := range of.edits {
		if e.start == at && e.end == at {
			of.edits[i].text += add.String()
			added = true
			break
		}
	}
	if !added {
		of.splice(at, at, prefix+add.String())
	}
	if !s.mentions().names(OverflowFile) {
		s.addPointer(makePointer("Index overflow", OverflowFile, "lines moved out of the index to keep it within budget"))
	}
}

// lineCount is how many lines b spans.
func lineCount(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// spareBlankLines are the blank lines of d no block needs, each as the
// byte range of its whole line: outside every leaf unit, after the first
// unit and before the last (a blank line at either end costs an agent
// nothing), and either right after a top-level heading, front matter or
// thematic break (a block its own line closes, so nothing after it can
// join it) or the second of two. Removing one changes no block; the
// structure check (applyRemovals) still verifies it.
func spareBlankLines(d *memory.Doc) [][2]int {
	if len(d.Units) == 0 {
		return nil
	}
	first, last := len(d.Src), 0
	var leaves []memory.Unit
	closedAt := map[int]bool{} // line ends of blocks their own line closes
	for _, u := range d.Units {
		first, last = min(first, u.Start), max(last, u.End)
		if u.Leaf {
			leaves = append(leaves, u)
		}
		if u.Parent < 0 && (u.Kind == memory.UnitHeading || u.Kind == memory.UnitFrontmatter || u.Kind == memory.UnitBreak) {
			closedAt[u.End] = true
		}
	}
	// Leaves never overlap, so in document order their ends rise too: one
	// pass over the lines and the leaves together.
	sort.Slice(leaves, func(a, b int) bool { return leaves[a].Start < leaves[b].Start })
	next := 0
	inLeaf := func(start, end int) bool {
		for next < len(leaves) && leaves[next].End <= start {
			next++
		}
		return next < len(leaves) && leaves[next].Start < end
	}
	var out [][2]int
	prevBlank := false
	for at := first; at < last; {
		end := d.LineEnd(at)
		if end <= at {
			break
		}
		blank := len(bytes.TrimSpace(d.Src[at:end])) == 0 && !inLeaf(at, end)
		if blank && (prevBlank || closedAt[at]) {
			out = append(out, [2]int{at, end})
		}
		prevBlank = blank
		at = end
	}
	return out
}

// directChild reports a unit that is a block of its item (not the item's
// first paragraph, which is the pointer itself).
func directChild(d *memory.Doc, i int) bool {
	u := d.Units[i]
	p := d.Units[u.Parent]
	return u.Start >= d.LineEnd(p.Start)
}

// overflow returns the overflow file, creating it (in memory) if needed.
func (s *state) overflow() *file {
	if f := s.byRel[OverflowFile]; f != nil {
		return f
	}
	head := "---\nname: Index overflow\ndescription: Lines moved out of the index verbatim so that it stays within the budget an agent loads\ntype: reference\n---\n\n# Index overflow\n"
	if s.index != nil && s.index.newline() == "\r\n" {
		head = strings.ReplaceAll(head, "\n", "\r\n")
	}
	f := &file{rel: OverflowFile, mode: 0o644}
	f.src = nil
	f.doc = memory.ParseDoc(nil)
	f.edits = []edit{{0, 0, head}}
	s.addFile(f)
	return f
}

// IndexState is the index as its agent loads it: its lines and size
// counted as the agent counts (Limit says whose rule, where it was read,
// and the unit of Size), and whether the agent cuts part of it off.
type IndexState struct {
	File       string `json:"file"`
	Lines      int    `json:"lines"`
	Size       int    `json:"size"`
	OverBudget bool   `json:"over_budget"`
	// Message says, when the index is over budget, what the agent loses
	// and what would bring it back within.
	Message string           `json:"message,omitempty"`
	Limit   indexcount.Limit `json:"limit"`
}

// measureIndex is the state of an index whose bytes are src.
func measureIndex(l Layout, src []byte) *IndexState {
	lim := l.Limit
	st := &IndexState{File: l.Index, Limit: lim}
	st.Lines, st.Size = lim.Count(src)
	switch {
	case lim.Unread(src):
		st.OverBudget = true
		st.Message = fmt.Sprintf("%s is %d bytes on disk, over the %d bytes %s reads at all: it loads none of it",
			l.Index, len(src), lim.MaxFileBytes, lim.Agent)
	case !lim.Fits(st.Lines, st.Size):
		st.OverBudget = true
		st.Message = fmt.Sprintf("%s is %d lines and %d %s as %s counts it, over the %s it loads: what lies past that is cut off and the agent never sees it",
			l.Index, st.Lines, st.Size, lim.Unit, lim.Agent, lim.Phrase())
	}
	return st
}

// MeasureIndex is the state of the index of the memory in dir under l; nil
// when the layout has no index or the memory has none yet.
func MeasureIndex(dir string, l Layout) (*IndexState, error) {
	if l.Index == "" {
		return nil, nil
	}
	r, err := memory.OpenReader(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, _, err := r.ReadFile(l.Index)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return measureIndex(l, data), nil
}

// indexState is the index as the run leaves it.
func (s *state) indexState() (*IndexState, error) {
	ix := s.index
	if ix == nil {
		return nil, nil
	}
	data := ix.src
	if len(ix.edits) > 0 {
		data, _ = ix.render()
	} else if data == nil {
		var err error
		if data, err = s.reread(ix); err != nil {
			return nil, err
		}
	}
	st := measureIndex(s.opts.Layout, data)
	if st.OverBudget {
		st.Message += "; the offline engine moves no pointers, headings, comments or pinned lines: merge related topics (a model dream does) or move pointers into a topic file"
	}
	return st, nil
}
