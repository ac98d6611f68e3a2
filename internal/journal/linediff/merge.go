package linediff

import "slices"

// Region is a stretch of lines both sides changed differently: lines
// [A0,A1) of the "ours" version.
type Region struct{ A0, A1 int }

// Merge3 is a line-based three-way merge: it applies the change o→theirs on
// top of ours, where ours also descends from o. Undo uses it with o = the
// dream's version, ours = the file now, theirs = the file before the dream,
// so the dream's hunks are reverted and later edits elsewhere survive; a
// commit uses it with o = the file before the dream, ours = the user's
// edit made meanwhile, theirs = the dream's version. Changes from the two
// sides that overlap or touch are a conflict unless they are identical; in
// a conflict the merged text keeps ours.
func Merge3(o, ours, theirs []string) ([]string, []Region) {
	sa, sb := Diff(o, ours), Diff(o, theirs)
	var out []string
	var conflicts []Region
	ia, ib, pos := 0, 0, 0
	for ia < len(sa) || ib < len(sb) {
		lo := 0
		if ib >= len(sb) || (ia < len(sa) && sa[ia].A0 <= sb[ib].A0) {
			lo = sa[ia].A0
		} else {
			lo = sb[ib].A0
		}
		hi := lo
		var ga, gb []Span
		for grew := true; grew; {
			grew = false
			for ia < len(sa) && sa[ia].A0 <= hi && sa[ia].A1 >= lo {
				hi = max(hi, sa[ia].A1)
				ga = append(ga, sa[ia])
				ia++
				grew = true
			}
			for ib < len(sb) && sb[ib].A0 <= hi && sb[ib].A1 >= lo {
				hi = max(hi, sb[ib].A1)
				gb = append(gb, sb[ib])
				ib++
				grew = true
			}
		}
		out = append(out, o[pos:lo]...)
		textA := rebuild(o, ours, ga, lo, hi)
		textB := rebuild(o, theirs, gb, lo, hi)
		switch {
		case len(gb) == 0:
			out = append(out, textA...)
		case len(ga) == 0:
			out = append(out, textB...)
		case slices.Equal(textA, textB):
			out = append(out, textA...)
		default:
			a0 := ga[0].B0 - (ga[0].A0 - lo)
			conflicts = append(conflicts, Region{A0: a0, A1: a0 + len(textA)})
			out = append(out, textA...)
		}
		pos = hi
	}
	return append(out, o[pos:]...), conflicts
}

// rebuild returns one side's text for o[lo:hi] given its spans there.
func rebuild(o, side []string, spans []Span, lo, hi int) []string {
	var out []string
	i := lo
	for _, s := range spans {
		out = append(out, o[i:s.A0]...)
		out = append(out, side[s.B0:s.B1]...)
		i = s.A1
	}
	return append(out, o[i:hi]...)
}
