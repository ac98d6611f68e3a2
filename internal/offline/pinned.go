package offline

import (
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
func PinnedFacts(memoryDir string, extra []string) ([]string, error) {
	dir, err := memory.Load(memoryDir)
	if err != nil {
		return nil, fmt.Errorf("pinned facts: %w", err)
	}
	var facts []string
	seen := map[string]bool{}
	add := func(f string) {
		f = strings.TrimSpace(f)
		if f != "" && !seen[f] {
			seen[f] = true
			facts = append(facts, f)
		}
	}
	for _, src := range fileTexts(dir) {
		d := memory.ParseDoc(src)
		for _, p := range d.Pins {
			ls, le := d.LineStart(p.Start), d.LineEnd(p.Start)
			line := string(src[ls:p.Start]) + string(src[p.End:le])
			add(lineFact(line))
		}
	}
	for _, e := range extra {
		add(e)
	}
	return facts, nil
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
	dir, err := memory.Load(memoryDir)
	if err != nil {
		return nil, fmt.Errorf("missing pinned: %w", err)
	}
	var texts []string
	for _, t := range fileTexts(dir) {
		texts = append(texts, collapseSpace(withoutPins(t)))
	}
	var missing []string
	for _, f := range facts {
		want := collapseSpace(f)
		if want == "" {
			continue
		}
		found := false
		for _, t := range texts {
			if strings.Contains(t, want) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, f)
		}
	}
	return missing, nil
}

// fileTexts is the bytes of every memory file, the index first.
func fileTexts(dir *memory.Dir) [][]byte {
	var out [][]byte
	if dir.Index != nil {
		var b strings.Builder
		for _, l := range dir.Index.Lines {
			b.WriteString(l.Raw)
			b.WriteByte('\n')
		}
		out = append(out, []byte(b.String()))
	}
	for _, t := range dir.Topics {
		out = append(out, t.Raw)
	}
	return out
}

// withoutPins is src with its pin markers cut out, so that a fact pinned
// mid-line ("never reset. <!-- pin --> (ask Ana)") is found as it was
// recorded, without the marker.
func withoutPins(src []byte) string {
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
