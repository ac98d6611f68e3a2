package offline

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// fromIndexHeading heads the section of a topic file that keeps index lines
// too long for the index, verbatim.
const fromIndexHeading = "## From the index"

// fixLongLines shortens index pointers longer than memory.MaxIndexLineChars
// and moves long non-pointer lines out. The full original line is appended
// to the pointer's topic file (or to the overflow file), so nothing is lost.
func (s *state) fixLongLines() {
	if s.index == nil || !s.hadPointers {
		return
	}
	del := map[int]bool{}
	for i := range s.index.lines {
		l := &s.index.lines[i]
		if utf8.RuneCountInString(l.text) <= memory.MaxIndexLineChars || isPinned(l.text) {
			continue
		}
		full := l.text
		p := memory.ParseIndexLine(l.orig, l.text)
		if !p.IsPointer {
			s.moveToOverflow(sectionOf(s.index, i), full)
			del[i] = true
			s.fixes = append(s.fixes, Fix{Kind: KindLongIndexLine, File: memory.IndexFile, Line: l.orig,
				Detail: fmt.Sprintf("moved a %d-character detail line to %s", utf8.RuneCountInString(full), OverflowFile)})
			continue
		}
		target := p.Target
		if rel, ok := memory.LocalTarget(p.Target); ok {
			target = rel
		}
		l.text = makePointer(p.Title, p.Target, p.Hook, memory.PointerTargetChars)
		keptIn := OverflowFile
		if rel, ok := memory.LocalTarget(p.Target); ok && s.byRel[rel] != nil && !s.byRel[rel].isIndex {
			s.appendFromIndex(s.byRel[rel], full)
			keptIn = rel
		} else {
			s.moveToOverflow("", full)
		}
		s.fixes = append(s.fixes, Fix{Kind: KindLongIndexLine, File: memory.IndexFile, Line: l.orig,
			Detail: fmt.Sprintf("shortened the pointer to %s from %d to %d characters; full line kept in %s",
				target, utf8.RuneCountInString(full), utf8.RuneCountInString(l.text), keptIn)})
	}
	s.index.deleteMarked(del)
	s.ensureOverflowIndexed()
}

// fixBudget moves the index's detail lines (everything but pointers,
// headings and blank lines) to the overflow file when the index exceeds the
// lines or bytes an agent loads. Pointers are never moved: a topic the index
// does not list is forgotten, so an index over budget with pointers alone
// needs merging, which is the model's call.
func (s *state) fixBudget() {
	if s.index == nil {
		return
	}
	lines, bytes := s.index.size()
	if lines <= memory.MaxIndexLines && bytes <= memory.MaxIndexBytes {
		return
	}
	if !s.hadPointers {
		s.notes = append(s.notes, fmt.Sprintf("%s is %d lines and %d bytes, past the %d-line/%d-byte budget, but holds content rather than pointers; only a model can condense it",
			memory.IndexFile, lines, bytes, memory.MaxIndexLines, memory.MaxIndexBytes))
		return
	}
	fence := s.index.fences()
	del := map[int]bool{}
	emptied := map[int]bool{} // heading line index → a line under it moved
	heading := -1
	moved := 0
	for i, l := range s.index.lines {
		t := strings.TrimSpace(l.text)
		if isHeading(l.text) && !fence[i] {
			heading = i
			continue
		}
		if t == "" || memory.ParseIndexLine(0, l.text).IsPointer || isPinned(l.text) {
			continue
		}
		s.moveToOverflow(sectionOf(s.index, i), l.text)
		del[i] = true
		moved++
		if heading >= 0 {
			emptied[heading] = true
		}
	}
	// A heading whose every line moved heads nothing now; its text travelled
	// with the lines as their section in the overflow file.
	for h := range emptied {
		if !sectionHasContent(s.index, h, del) {
			del[h] = true
		}
	}
	s.index.deleteMarked(del)
	s.index.collapseBlankRuns()
	if moved > 0 {
		s.ensureOverflowIndexed()
	}
	nl, nb := s.index.size()
	if moved > 0 {
		s.fixes = append(s.fixes, Fix{Kind: KindIndexBudget, File: memory.IndexFile,
			Detail: fmt.Sprintf("moved %d detail lines to %s: index was %d lines/%d bytes, now %d lines/%d bytes",
				moved, OverflowFile, lines, bytes, nl, nb)})
	}
	if nl > memory.MaxIndexLines || nb > memory.MaxIndexBytes {
		s.notes = append(s.notes, fmt.Sprintf("%s is still %d lines and %d bytes with pointers alone (budget %d lines, %d bytes): related topics need merging",
			memory.IndexFile, nl, nb, memory.MaxIndexLines, memory.MaxIndexBytes))
	}
}

// sectionOf is the text of the heading above line i, or "".
func sectionOf(d *doc, i int) string {
	fence := d.fences()
	for k := i - 1; k >= 0; k-- {
		if isHeading(d.lines[k].text) && !fence[k] {
			return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(d.lines[k].text), "#"))
		}
	}
	return ""
}

// sectionHasContent reports whether any line under heading h, up to the next
// heading, survives the deletion.
func sectionHasContent(d *doc, h int, del map[int]bool) bool {
	for k := h + 1; k < len(d.lines); k++ {
		if isHeading(d.lines[k].text) {
			return false
		}
		if !del[k] && strings.TrimSpace(d.lines[k].text) != "" {
			return true
		}
	}
	return false
}

// collapseBlankRuns leaves at most one blank line in a row and none at the end.
func (d *doc) collapseBlankRuns() {
	out := d.lines[:0]
	for _, l := range d.lines {
		if strings.TrimSpace(l.text) == "" && (len(out) == 0 || strings.TrimSpace(out[len(out)-1].text) == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1].text) == "" {
		out = out[:len(out)-1]
	}
	d.lines = out
}

// overflow returns the overflow file, creating it (in memory) if needed.
func (s *state) overflow() *doc {
	if d := s.byRel[OverflowFile]; d != nil {
		return d
	}
	d := &doc{rel: OverflowFile, finalNL: true, mode: 0o644}
	d.insertAt(0,
		"---",
		"name: Index overflow",
		"description: Detail moved out of MEMORY.md verbatim so the index stays within the budget an agent loads",
		"type: reference",
		"---",
		"",
		"# Index overflow",
		"",
		"Lines moved here from MEMORY.md by dream's offline engine, under the heading they had there.",
	)
	d.body = 5
	s.addDoc(d)
	return d
}

// moveToOverflow appends a line to the overflow file under its section.
func (s *state) moveToOverflow(section, text string) {
	d := s.overflow()
	want := "## " + section
	if section == "" {
		want = "## (no heading)"
	}
	if sectionOf(d, len(d.lines)) != strings.TrimPrefix(want, "## ") {
		d.appendBlock(want)
	}
	d.insertAt(len(d.lines), text)
}

// appendFromIndex appends an index line to a topic's "From the index" section.
func (s *state) appendFromIndex(d *doc, text string) {
	if sectionOf(d, len(d.lines)) != strings.TrimPrefix(fromIndexHeading, "## ") {
		d.appendBlock(fromIndexHeading)
	}
	d.insertAt(len(d.lines), text)
}

// appendBlock adds a heading after a blank line, followed by a blank line.
func (d *doc) appendBlock(heading string) {
	if n := len(d.lines); n > 0 && strings.TrimSpace(d.lines[n-1].text) != "" {
		d.insertAt(n, "")
	}
	d.insertAt(len(d.lines), heading, "")
	d.finalNL = true
}

// ensureOverflowIndexed adds the overflow file's pointer if it was created
// or grown and the index does not list it yet.
func (s *state) ensureOverflowIndexed() {
	d := s.byRel[OverflowFile]
	if d == nil || s.indexed()[OverflowFile] {
		return
	}
	ptr := makePointer("Index overflow", OverflowFile, "detail moved out of the index to keep it within budget", memory.PointerTargetChars)
	s.appendPointer(ptr)
	if d.exists {
		s.fixes = append(s.fixes, Fix{Kind: KindUnindexedTopic, File: OverflowFile,
			Detail: fmt.Sprintf("added index pointer %q", ptr)})
	}
}
