package offline

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// fixUnindexed adds a pointer for every topic file the index does not list.
// It only does so for a pointer-style index (or when there is no index but
// the topics carry frontmatter): nanobot's single MEMORY.md holds content,
// not pointers, and other markdown beside it is none of its business.
func (s *state) fixUnindexed() {
	if s.index == nil {
		if !s.anyFrontmatter() {
			return
		}
		s.index = &doc{rel: memory.IndexFile, isIndex: true, finalNL: true, mode: 0o644}
		s.docs = append([]*doc{s.index}, s.docs...)
		s.byRel[memory.IndexFile] = s.index
		s.hadPointers = true
	}
	if !s.hadPointers {
		return
	}
	listed := s.indexed()
	for _, d := range s.docs {
		if d.isIndex || listed[d.rel] {
			continue
		}
		ptr := pointerFor(d)
		s.appendPointer(ptr)
		listed[d.rel] = true
		s.fixes = append(s.fixes, Fix{Kind: KindUnindexedTopic, File: d.rel,
			Detail: fmt.Sprintf("added index pointer %q", ptr)})
	}
}

func (s *state) anyFrontmatter() bool {
	for _, d := range s.docs {
		if d.topic != nil && d.topic.Frontmatter {
			return true
		}
	}
	return false
}

// indexed is the set of local files the index points to.
func (s *state) indexed() map[string]bool {
	m := map[string]bool{}
	if s.index == nil {
		return m
	}
	for _, l := range s.index.lines {
		p := memory.ParseIndexLine(0, l.text)
		if rel, ok := memory.LocalTarget(p.Target); p.IsPointer && ok {
			m[rel] = true
		}
	}
	return m
}

// appendPointer adds a pointer after the last one, so pointers stay together.
func (s *state) appendPointer(ptr string) {
	at := s.index.lastPointer() + 1
	if at == 0 {
		at = len(s.index.lines)
	}
	s.index.insertAt(at, ptr)
}

// pointerFor builds "- [Title](path) — hook" for a topic from its
// frontmatter, else its first heading and first line of prose.
func pointerFor(d *doc) string {
	title, hook := "", ""
	if t := d.topic; t != nil {
		title, hook = t.Name, t.Description
		if title == "" {
			title = t.Heading()
		}
	} else {
		title = firstHeading(d)
	}
	if title == "" {
		title = strings.TrimSuffix(d.rel[strings.LastIndex(d.rel, "/")+1:], ".md")
	}
	if hook == "" {
		hook = firstProse(d)
	}
	// A file name may hold characters a link reads as an escape, a
	// fragment or a query; escape them so the pointer names the file.
	link := strings.NewReplacer("%", "%25", "#", "%23", "?", "%3F").Replace(d.rel)
	return makePointer(title, link, hook, memory.PointerTargetChars)
}

// makePointer formats a pointer no longer than max characters, shortening
// the hook (then the title) at a word boundary. The link is never cut.
func makePointer(title, target, hook string, max int) string {
	title = strings.NewReplacer("[", "(", "]", ")").Replace(collapseSpace(title))
	hook = collapseSpace(hook)
	link := target
	if strings.ContainsAny(link, " ()<>") {
		link = "<" + link + ">"
	}
	head := func(t string) string { return "- [" + t + "](" + link + ")" }
	if n := utf8.RuneCountInString(head(title)); n > max-20 && utf8.RuneCountInString(title) > 20 {
		title = shorten(title, utf8.RuneCountInString(title)-(n-(max-20)))
	}
	p := head(title)
	if hook == "" {
		return p
	}
	room := max - utf8.RuneCountInString(p) - len(" — ")
	if room < 10 {
		return p
	}
	return p + " — " + shorten(hook, room)
}

// shorten cuts s to at most max runes at a word boundary, marking the cut
// with an ellipsis.
func shorten(s string, max int) string {
	if max < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max-1]
	cut := string(r)
	if i := strings.LastIndex(cut, " "); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-—") + "…"
}

func firstHeading(d *doc) string {
	for _, l := range d.lines[d.body:] {
		if isHeading(l.text) {
			if h := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l.text), "#")); h != "" {
				return h
			}
		}
	}
	return ""
}

// firstProse is the first line of the body that is neither heading nor code.
func firstProse(d *doc) string {
	fence := d.fences()
	for i := d.body; i < len(d.lines); i++ {
		t := strings.TrimSpace(d.lines[i].text)
		if fence[i] || t == "" || isHeading(t) || isStructural(t) {
			continue
		}
		if m := bulletRE.FindStringSubmatch(t); m != nil {
			t = m[2]
		}
		return pinRE.ReplaceAllString(t, "")
	}
	return ""
}
