package offline

import (
	"github.com/dreamkit/dream/internal/memory"
)

// keepsStructure reports whether applying edits to f leaves every leaf unit
// of the original that no edit touches where it was: a unit of the same
// kind, with the same bytes, under the same heading path. Byte identity
// alone is not enough: removing the item between two blockquotes merges
// them, removing a blank-separated paragraph can make the next one a
// continuation of the previous, and the words then mean something else.
func keepsStructure(f *file, edits []edit) bool {
	saved := f.edits
	f.edits = edits
	out, _ := f.render()
	f.edits = saved
	after := memory.ParseDoc(out)
	// The keys are built in one buffer and looked up as string(buf), which
	// allocates nothing: only a key seen first in the output is copied.
	slot := make(map[string]int, len(after.Units))
	have := make([]int, 0, len(after.Units))
	var buf []byte
	for _, u := range after.Units {
		buf = appendUnitKey(buf[:0], after, u)
		i, ok := slot[string(buf)]
		if !ok {
			i = len(have)
			slot[string(buf)] = i
			have = append(have, 0)
		}
		have[i]++
	}
	d := f.doc
	for _, u := range d.Units {
		if !u.Leaf || touchedBy(edits, u) {
			continue
		}
		buf = appendUnitKey(buf[:0], d, u)
		i, ok := slot[string(buf)]
		if !ok || have[i] == 0 {
			return false
		}
		have[i]--
	}
	return true
}

// appendUnitKey appends what makes two units the same for keepsStructure:
// kind, heading path and bytes.
func appendUnitKey(b []byte, d *memory.Doc, u memory.Unit) []byte {
	b = append(b, u.Kind...)
	b = append(b, 0)
	for i, p := range u.Path {
		if i > 0 {
			b = append(b, 0x1f)
		}
		b = append(b, p...)
	}
	b = append(b, 0)
	return append(b, d.Src[u.Start:u.End]...)
}

func touchedBy(edits []edit, u memory.Unit) bool {
	for _, e := range edits {
		if e.start < u.End && u.Start < e.end || e.start == e.end && e.start > u.Start && e.start < u.End {
			return true
		}
	}
	return false
}

// removal is a unit the engine would take out of a file, with its record.
type removal struct {
	start, end int
	kind       string
	detail     string
}

// applyRemovals splices the removals into f that keep its structure: all at
// once when together they do (the common case, one parse), else one by one.
// It records a fix for each applied and returns how many were applied.
func (s *state) applyRemovals(f *file, rs []removal) []removal {
	if len(rs) == 0 {
		return nil
	}
	all := append([]edit(nil), f.edits...)
	for _, r := range rs {
		all = append(all, edit{r.start, r.end, ""})
	}
	var ok []removal
	if keepsStructure(f, all) {
		ok = rs
	} else {
		cur := append([]edit(nil), f.edits...)
		for _, r := range rs {
			try := append(append([]edit(nil), cur...), edit{r.start, r.end, ""})
			if keepsStructure(f, try) {
				cur = try
				ok = append(ok, r)
			}
		}
	}
	var applied []removal
	for _, r := range ok {
		if f.splice(r.start, r.end, "") {
			s.fix(f, r.kind, r.start, r.end, r.detail)
			applied = append(applied, r)
		}
	}
	return applied
}
