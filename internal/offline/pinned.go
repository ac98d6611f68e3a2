package offline

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dreamkit/dream/internal/memory"
)

// PinnedFacts returns the facts a dream must keep: the text of every memory
// line that carries the pin marker "<!-- pin -->" anywhere outside code
// (the line without the marker, its list bullet or quote marker), then the
// extra strings configured by the user, without repeats, in that order. A
// marker inside a code span or a code block is quoted code, not a pin. A
// dream that loses a pinned fact is rolled back by the caller.
//
// The memory is read one file at a time, and only a file that holds an HTML
// comment at all is parsed: the cost is a read of each file, and what is
// held is one file and the facts.
func PinnedFacts(memoryDir string, extra []string) ([]string, error) {
	var facts []string
	seen := map[string]bool{}
	add := func(f string) {
		f = strings.TrimSpace(f)
		if f != "" && !seen[f] {
			seen[f] = true
			facts = append(facts, f)
		}
	}
	err := eachFile(memoryDir, func(src []byte) bool {
		if !bytes.Contains(src, []byte("<!--")) {
			return true
		}
		for _, f := range pinsOf(memory.ParseDoc(src)) {
			add(f)
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("pinned facts: %w", err)
	}
	for _, e := range extra {
		add(e)
	}
	return facts, nil
}

// pinsOf are the pinned facts of a parsed file, in order.
func pinsOf(d *memory.Doc) []string {
	var out []string
	for _, p := range d.Pins {
		ls, le := d.LineStart(p.Start), d.LineEnd(p.Start)
		line := string(d.Src[ls:p.Start]) + string(d.Src[p.End:le])
		out = append(out, lineFact(line))
	}
	return out
}

// eachFile hands fn the bytes of every memory file (as memory.Load finds
// them), the index first, one at a time; fn returns false to stop.
func eachFile(memoryDir string, fn func(src []byte) bool) error {
	l, err := memory.List(memoryDir)
	if err != nil {
		return err
	}
	r, err := memory.OpenReader(l.Root)
	if err != nil {
		return err
	}
	defer r.Close()
	rels := l.Topics
	if l.Index {
		rels = append([]string{memory.IndexFile}, rels...)
	}
	for _, rel := range rels {
		data, _, err := r.ReadFile(rel)
		if err != nil {
			return err
		}
		if !fn(data) {
			return nil
		}
	}
	return nil
}

// lineFact strips the markers that frame a line's text.
func lineFact(line string) string {
	t := strings.TrimSpace(line)
	for {
		n := t
		n = strings.TrimSpace(strings.TrimPrefix(n, ">"))
		for _, m := range []string{"- ", "* ", "+ "} {
			n = strings.TrimPrefix(n, m)
		}
		if i := strings.IndexAny(n, ".)"); i > 0 && i <= 4 && strings.Trim(n[:i], "0123456789") == "" && len(n) > i+1 && n[i+1] == ' ' {
			n = n[i+2:]
		}
		n = strings.TrimSpace(n)
		if n == t {
			return collapseSpace(t)
		}
		t = n
	}
}

// MissingPinned returns the facts that no memory file contains any more.
// The search ignores differences in whitespace, so re-wrapping a line or
// re-indenting a list does not count as losing it.
func MissingPinned(facts []string, memoryDir string) ([]string, error) {
	want := make([]string, len(facts))
	found := make([]bool, len(facts))
	left := 0
	for i, f := range facts {
		if want[i] = collapseSpace(f); want[i] != "" {
			left++
		}
	}
	if left > 0 {
		err := eachFile(memoryDir, func(src []byte) bool {
			t := collapseSpace(withoutPins(src))
			for i, w := range want {
				if w != "" && !found[i] && strings.Contains(t, w) {
					found[i] = true
					left--
				}
			}
			return left > 0
		})
		if err != nil {
			return nil, fmt.Errorf("missing pinned: %w", err)
		}
	}
	var missing []string
	for i, f := range facts {
		if want[i] != "" && !found[i] {
			missing = append(missing, f)
		}
	}
	return missing, nil
}

// withoutPins is src with its pin markers cut out, so that a fact pinned
// mid-line ("never reset. <!-- pin --> (ask Ana)") is found as it was
// recorded, without the marker.
func withoutPins(src []byte) string {
	if !bytes.Contains(src, []byte("<!--")) {
		return string(src)
	}
	d := memory.ParseDoc(src)
	if len(d.Pins) == 0 {
		return string(src)
	}
	var b strings.Builder
	last := 0
	for _, p := range d.Pins {
		b.Write(src[last:p.Start])
		last = p.End
	}
	b.Write(src[last:])
	return b.String()
}
