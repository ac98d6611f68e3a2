// Package linediff computes line-based differences between two texts: the
// edit spans (Myers' O(ND) algorithm), line counts, and git-compatible
// unified diffs. It is written in Go rather than shelling out to git so that
// a dream's journal can describe its changes without any external binary,
// and so that the audit layer can merge three versions of a file per hunk.
package linediff

import "bytes"

// MaxEdits bounds the edit distance the Myers search explores. Beyond it,
// Diff stops searching and reports the differing middle (after the common
// prefix and suffix are trimmed) as a single replacement: still a correct
// diff, just not a minimal one. The bound keeps time and memory (which grow
// with the square of the distance) small on pathological inputs.
const MaxEdits = 1000

// Span is one change: lines A[A0:A1] of the old text are replaced by lines
// B[B0:B1] of the new text. Either range may be empty (pure insertion or
// deletion), never both.
type Span struct{ A0, A1, B0, B1 int }

// Split returns the lines of b, each keeping its trailing "\n"; the last line
// lacks it when b does not end in a newline. Keeping the terminator means a
// file that gains or loses its final newline differs on its last line, as in
// git.
func Split(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := make([]string, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, string(b))
			break
		}
		lines = append(lines, string(b[:i+1]))
		b = b[i+1:]
	}
	return lines
}

// IsBinary reports whether b looks like binary data: git's own heuristic, a
// NUL byte in the first 8000 bytes.
func IsBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// Counts returns how many lines were added and removed going from a to b.
// Binary content counts as zero lines, as git's numstat does not count it.
func Counts(a, b []byte) (added, removed int) {
	if IsBinary(a) || IsBinary(b) {
		return 0, 0
	}
	for _, s := range Diff(Split(a), Split(b)) {
		removed += s.A1 - s.A0
		added += s.B1 - s.B0
	}
	return added, removed
}

// Diff returns the spans that turn a into b, in order and non-overlapping,
// separated by at least one common line.
func Diff(a, b []string) []Span {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma) == 0 && len(mb) == 0 {
		return nil
	}
	ia, ib := intern(ma, mb)
	spans := myers(ia, ib)
	for i := range spans {
		spans[i].A0 += pre
		spans[i].A1 += pre
		spans[i].B0 += pre
		spans[i].B1 += pre
	}
	return spans
}

// intern maps each distinct line to a small integer so the search compares
// ints, not strings.
func intern(a, b []string) ([]int, []int) {
	ids := make(map[string]int, len(a)+len(b))
	conv := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}

// myers finds a shortest edit script between a and b and returns it as
// spans. It keeps one snapshot of the frontier per edit distance, which is
// why the distance is bounded by MaxEdits.
func myers(a, b []int) []Span {
	n, m := len(a), len(b)
	whole := []Span{{0, n, 0, m}}
	if n == 0 || m == 0 {
		return whole
	}
	maxD := n + m
	if maxD > MaxEdits {
		maxD = MaxEdits
	}
	off := maxD + 1
	v := make([]int, 2*off+1)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
	}
	if found < 0 {
		return whole
	}
	delA := make([]bool, n)
	insB := make([]bool, m)
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1]
		get := func(k int) int { return prev[k+d-1] }
		k := x - y
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(pk)
		py := px - pk
		if pk == k+1 {
			insB[py] = true
		} else {
			delA[px] = true
		}
		x, y = px, py
	}
	return spansOf(delA, insB)
}

// spansOf groups per-line deletions and insertions into spans. The lines
// neither deleted nor inserted are matched one to one in order.
func spansOf(delA, insB []bool) []Span {
	var out []Span
	i, j := 0, 0
	for i < len(delA) || j < len(insB) {
		if i < len(delA) && j < len(insB) && !delA[i] && !insB[j] {
			i++
			j++
			continue
		}
		s := Span{A0: i, B0: j}
		for i < len(delA) && delA[i] {
			i++
		}
		for j < len(insB) && insB[j] {
			j++
		}
		s.A1, s.B1 = i, j
		if s.A0 == s.A1 && s.B0 == s.B1 {
			// Unreachable for a consistent script; never loop forever.
			s.A1, s.B1 = len(delA), len(insB)
			i, j = s.A1, s.B1
		}
		out = append(out, s)
	}
	return out
}
