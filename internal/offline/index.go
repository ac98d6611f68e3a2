package offline

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
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
	at, prefix := len(ix.src), ""
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
// are percent-encoded (memory.LocalTarget decodes them).
func makePointer(title, rel, hook string) string {
	title = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(collapseSpace(stripPin(title)))
	hook = collapseSpace(stripPin(hook))
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

// escapeDest percent-encodes what CommonMark or a URL reader would not keep.
func escapeDest(rel string) string {
	var b strings.Builder
	for _, c := range []byte(rel) {
		if c <= ' ' || c == 0x7f || strings.IndexByte(`<>()[]\#?%"'`+"`", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// budget is the size of an index as an agent loads it.
func budget(src []byte) (lines, size int) { return memory.LoadedSize(src) }

// fixBudget keeps the index within what an agent loads by moving whole
// units, verbatim, to the overflow file: first the detail nested under a
// pointer, then the user's own text from the bottom up, never pointers,
// headings, frontmatter, comments or pinned lines, and only as many as the
// budget needs.
func (s *state) fixBudget() error {
	ix := s.index
	if ix == nil {
		return nil
	}
	cur, _ := ix.render()
	lines, size := budget(cur)
	needLines, needBytes := lines-memory.MaxIndexLines, size-memory.MaxIndexBytes
	if needLines <= 0 && needBytes <= 0 {
		return nil
	}
	if !s.mentions().names(OverflowFile) {
		needLines++
		needBytes += len(makePointer("Index overflow", OverflowFile, "lines moved out of the index to keep it within budget")) + 1
	}
	d := ix.doc
	type cand struct {
		u     int
		lines int
	}
	var detail, text []cand
	for i, u := range d.Units {
		if d.PinnedRange(u.Start, u.End) || ix.touched(u.Start, u.End) {
			continue
		}
		n, _ := budget(d.Src[u.Start:u.End])
		if u.Parent >= 0 {
			p := d.Units[u.Parent]
			if p.Kind == memory.UnitItem && p.Parent < 0 && isPointerItem(d, p) && u.Start > d.LineEnd(p.Start)-1 && directChild(d, i) {
				detail = append(detail, cand{i, n})
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
		text = append(text, cand{i, n})
	}
	// Bottom-up: the user's newest text moves first, the top of the index,
	// which an agent reads first, stays.
	sort.SliceStable(detail, func(a, b int) bool { return detail[a].u > detail[b].u })
	sort.SliceStable(text, func(a, b int) bool { return text[a].u > text[b].u })
	var moved []int
	for _, c := range append(detail, text...) {
		if needLines <= 0 && needBytes <= 0 {
			break
		}
		u := d.Units[c.u]
		if needLines <= 0 && needBytes > 0 && c.lines == 0 {
			continue
		}
		moved = append(moved, c.u)
		needLines -= c.lines
		needBytes -= u.End - u.Start
	}
	if len(moved) == 0 || needLines > 0 || needBytes > 0 {
		// Moving the user's text out of the index is worth it only if the
		// index then fits; otherwise it only hides their words.
		s.notes = append(s.notes, fmt.Sprintf("%s is over budget (%d lines, %d bytes; budget %d, %d) with pointers, headings and pinned lines alone: related topics need merging",
			ix.rel, lines, size, memory.MaxIndexLines, memory.MaxIndexBytes))
		return nil
	}
	sort.Ints(moved)
	var rs []removal
	byStart := map[int]int{}
	for _, i := range moved {
		u := d.Units[i]
		byStart[u.Start] = i
		rs = append(rs, removal{u.Start, u.End, KindIndexBudget, fmt.Sprintf("moved %q to %s to keep the index within %d lines and %d bytes",
			clip(string(d.Src[u.Start:u.End]), 100), OverflowFile, memory.MaxIndexLines, memory.MaxIndexBytes)})
	}
	applied := s.applyRemovals(ix, rs)
	if len(applied) < len(rs) {
		s.notes = append(s.notes, fmt.Sprintf("%s: %d line(s) were not moved out of the index because their neighbours would have merged", ix.rel, len(rs)-len(applied)))
	}
	of := s.overflow()
	var add strings.Builder
	nl := of.newline()
	lastSection := ""
	for _, r := range applied {
		u := d.Units[byStart[r.start]]
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
	at := len(of.src)
	prefix := ""
	if at > 0 && !bytes.HasSuffix(of.src, []byte("\n")) {
		prefix = nl
	}
	if !of.exists {
		at = 0
	}
	for i, e := range of.edits {
		if e.start == at && e.end == at {
			of.edits[i].text += add.String()
			goto pointer
		}
	}
	of.splice(at, at, prefix+add.String())
pointer:
	if !s.mentions().names(OverflowFile) {
		s.addPointer(makePointer("Index overflow", OverflowFile, "lines moved out of the index to keep it within budget"))
	}
	after, _ := ix.render()
	if l, b := budget(after); l > memory.MaxIndexLines || b > memory.MaxIndexBytes {
		s.notes = append(s.notes, fmt.Sprintf("%s is still %d lines and %d bytes with pointers alone (budget %d lines, %d bytes): related topics need merging",
			ix.rel, l, b, memory.MaxIndexLines, memory.MaxIndexBytes))
	}
	return nil
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
