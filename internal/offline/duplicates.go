package offline

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// unit is a candidate fact: a list item (with its continuation lines) or a
// paragraph. start and end index d.lines, end exclusive.
type unit struct {
	start, end int
	key        string
	section    string
	pointer    bool
	bullet     bool
}

// fixDuplicates removes units whose normalised text already appeared. The
// first occurrence wins, in reading order: the index, then topics in the
// order the index lists them, then the rest by path.
//
// Within one file, two equal units under different headings are not
// duplicates ("- deploy with make" under Staging and under Production are two
// facts). Nested list items depend on their parent and are never removed.
func (s *state) fixDuplicates() {
	type first struct {
		file    string
		line    int
		section string
	}
	seen := map[string]first{}
	for _, d := range s.readingOrder() {
		del := map[int]bool{}
		for _, u := range units(d) {
			k := u.key
			if u.pointer {
				k = "\x00ptr:" + k // pointers only duplicate pointers
			}
			f, dup := seen[k]
			if !dup {
				seen[k] = first{d.rel, d.lines[u.start].orig, u.section}
				continue
			}
			if f.file == d.rel && f.section != u.section {
				continue
			}
			var removed []string
			for i := u.start; i < u.end; i++ {
				del[i] = true
				removed = append(removed, strings.TrimSpace(d.lines[i].text))
			}
			// A paragraph leaves its blank separator behind; take one along.
			if !u.bullet && u.start > 0 &&
				strings.TrimSpace(d.lines[u.start-1].text) == "" && (u.end == len(d.lines) || strings.TrimSpace(d.lines[u.end].text) == "") {
				del[u.start-1] = true
			}
			where := f.file
			if f.line > 0 {
				where = fmt.Sprintf("%s:%d", f.file, f.line)
			}
			s.fixes = append(s.fixes, Fix{Kind: KindDuplicate, File: d.rel, Line: d.lines[u.start].orig,
				Detail: fmt.Sprintf("removed %q: duplicate of %s", strings.Join(removed, " "), where)})
		}
		d.deleteMarked(del)
	}
}

// readingOrder is the order in which first occurrences are kept.
func (s *state) readingOrder() []*doc {
	var out []*doc
	done := map[string]bool{}
	add := func(d *doc) {
		if d != nil && !done[d.rel] {
			done[d.rel] = true
			out = append(out, d)
		}
	}
	if s.index != nil {
		add(s.index)
		for _, l := range s.index.lines {
			p := memory.ParseIndexLine(0, l.text)
			if rel, ok := memory.LocalTarget(p.Target); p.IsPointer && ok {
				add(s.byRel[rel])
			}
		}
	}
	for _, d := range s.docs {
		add(d)
	}
	return out
}

// units splits a file's body into candidate facts. Lines in code, pinned
// lines, headings and layout are never part of a unit.
func units(d *doc) []unit {
	fence := d.fences()
	var out []unit
	section := ""
	afterItem := -1 // the line just past the last list item
	skip := func(i int) bool {
		t := d.lines[i].text
		return fence[i] || strings.TrimSpace(t) == "" || isHeading(t) || isStructural(t)
	}
	for i := d.body; i < len(d.lines); {
		t := d.lines[i].text
		if isHeading(t) && !fence[i] {
			section = strings.TrimSpace(t)
		}
		if skip(i) {
			i++
			continue
		}
		if m := bulletRE.FindStringSubmatch(t); m != nil {
			ind := indentOf(t)
			j := i + 1
			for j < len(d.lines) && !skip(j) && bulletRE.FindStringSubmatch(d.lines[j].text) == nil && indentOf(d.lines[j].text) > ind {
				j++
			}
			safe := ind < 2 // top-level items only
			if j < len(d.lines) && !skip(j) {
				// A nested child or a lazy continuation belongs to this item:
				// removing the item would re-parent or orphan it.
				if bulletRE.FindStringSubmatch(d.lines[j].text) == nil || indentOf(d.lines[j].text) > ind {
					safe = false
				}
			}
			out = appendUnit(out, d, i, j, section, safe, true)
			i, afterItem = j, j
			continue
		}
		j := i + 1
		for j < len(d.lines) && !skip(j) && bulletRE.FindStringSubmatch(d.lines[j].text) == nil {
			j++
		}
		// Text right after an item, with no blank line, continues the item.
		safe := i != afterItem
		if j-i > 1 && sentencePerLine(d, i, j) {
			// One sentence per line is a list of facts without markers
			// (nanobot writes memory this way), not a wrapped paragraph.
			for k := i; k < j; k++ {
				out = appendUnit(out, d, k, k+1, section, safe, true)
			}
		} else {
			out = appendUnit(out, d, i, j, section, safe, false)
		}
		i = j
	}
	return out
}

func appendUnit(out []unit, d *doc, start, end int, section string, safe, bullet bool) []unit {
	var parts []string
	for i := start; i < end; i++ {
		if isPinned(d.lines[i].text) {
			return out
		}
		parts = append(parts, d.lines[i].text)
	}
	if !safe {
		return out
	}
	key := normalize(strings.Join(parts, " "))
	if !substantial(key) {
		return out
	}
	ptr := d.isIndex && memory.ParseIndexLine(0, d.lines[start].text).IsPointer
	return append(out, unit{start: start, end: end, key: key, section: section, pointer: ptr, bullet: bullet})
}

// sentencePerLine reports whether every line of d.lines[i:j] ends a sentence.
func sentencePerLine(d *doc, i, j int) bool {
	for k := i; k < j; k++ {
		t := strings.TrimSpace(d.lines[k].text)
		r, _ := utf8.DecodeLastRuneInString(t)
		if !strings.ContainsRune(".!?。！？", r) {
			return false
		}
	}
	return true
}
