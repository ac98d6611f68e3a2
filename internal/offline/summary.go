package offline

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// fileSum is what the cross-file leads need of one file once its text is
// dropped: per candidate unit a hash of its normalised text and its
// shingles, and the names it mentions. Texts are read again only for the
// few leads that are reported.
type fileSum struct {
	Units []unitSum
	// Shingles holds every unit's shingles, one after the other (one
	// allocation per file, not one per unit).
	Shingles []uint64
	Mentions []mentionSum
	// HasMentions is set when Mentions were extracted (only runs with a
	// repository need them).
	HasMentions bool
}

// unitSum is one list item or top-level paragraph.
type unitSum struct {
	// Unit is the unit's index in its file's memory.Doc.Units, Line its line.
	Unit, Line int32
	// Key is a hash of normalize(Content): equal keys are exact copies.
	Key uint64
	// Cross is set when the unit says enough to be a cross-file duplicate.
	Cross bool
	// Off and N place the unit's shingles in fileSum.Shingles: the sorted
	// distinct hashes of its shingles, when it is a near-duplicate
	// candidate (two or more, outside the index); N is 0 otherwise.
	Off, N int32
}

// shingles returns unit u's shingles.
func (s *fileSum) shingles(u *unitSum) []uint64 { return s.Shingles[u.Off : u.Off+u.N : u.Off+u.N] }

// mentionSum is one name a unit mentions, for the drift check.
type mentionSum struct {
	Line          int32
	Mention, Kind string
}

// summarize analyses a parsed file for the leads.
func (s *state) summarize(f *file) *fileSum {
	d := f.doc
	sum := &fileSum{HasMentions: s.opts.RepoDir != ""}
	for i, u := range d.Units {
		if u.Kind == memory.UnitItem || u.Kind == memory.UnitParagraph && u.Parent < 0 {
			key := f.norm(i)
			us := unitSum{Unit: int32(i), Line: int32(d.LineOf(u.Start)), Key: hashString(key), Cross: substantial(key)}
			if !f.index {
				if sh := shingleHashes(key); len(sh) >= 2 {
					us.Off, us.N = int32(len(sum.Shingles)), int32(len(sh))
					sum.Shingles = append(sum.Shingles, sh...)
				}
			}
			if us.Cross || us.N > 0 {
				sum.Units = append(sum.Units, us)
			}
		}
		if sum.HasMentions && driftUnit(u) {
			for _, m := range mentions(u.Content) {
				// Cloned: a substring would keep the unit's whole text alive.
				sum.Mentions = append(sum.Mentions, mentionSum{Line: int32(d.LineOf(u.Start)), Mention: strings.Clone(m.Mention), Kind: m.Kind})
			}
		}
	}
	sum.Shingles = slices.Clip(sum.Shingles)
	return sum
}

// driftUnit reports a unit whose text is checked for drifted names: prose,
// not code, quotes, frontmatter or HTML (an item's text is checked in its
// paragraphs).
func driftUnit(u memory.Unit) bool {
	switch u.Kind {
	case memory.UnitCode, memory.UnitItem, memory.UnitQuote, memory.UnitFrontmatter, memory.UnitHTML:
		return false
	}
	return true
}

// FNV-1a, written out so that hashing a shingle allocates nothing.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(s string) uint64 { return fnvAdd(fnvOffset, s) }

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// shingleHashes is shingles as sorted distinct 64-bit hashes: the same sets
// (a collision is one in 2^64), at a fraction of the memory. Tokens are the
// words of norm, a word with ideographs split into its characters; they
// are held as byte ranges of norm and hashed in place, so that the only
// allocations are the token list and the result.
func shingleHashes(norm string) []uint64 {
	toks := make([][2]int32, 0, 16)
	for i := 0; i < len(norm); {
		r, n := rune(norm[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(norm[i:])
		}
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(norm) {
			r, n := rune(norm[j]), 1
			if r >= utf8.RuneSelf {
				r, n = utf8.DecodeRuneInString(norm[j:])
			}
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		if w := norm[i:j]; !hasIdeographs(w) {
			toks = append(toks, [2]int32{int32(i), int32(j)})
		} else if !utf8.ValidString(w) {
			// A character token of invalid UTF-8 is U+FFFD, which norm does
			// not hold (normalize's output never has one).
			return shingleHashesOf(strings.Fields(norm))
		} else {
			for k, r := range w {
				toks = append(toks, [2]int32{int32(i + k), int32(i + k + utf8.RuneLen(r))})
			}
		}
		i = j
	}
	tok := func(k int) string { return norm[toks[k][0]:toks[k][1]] }
	var out []uint64
	if len(toks) < 3 {
		h := uint64(fnvOffset)
		for k := range toks {
			if k > 0 {
				h = fnvAdd(h, "\x00")
			}
			h = fnvAdd(h, tok(k))
		}
		out = append(out, h)
	} else {
		out = make([]uint64, 0, len(toks)-2)
		for i := 0; i+3 <= len(toks); i++ {
			// The hash of toks[i] + "\x00" + toks[i+1] + "\x00" + toks[i+2].
			h := fnvAdd(fnvAdd(fnvAdd(fnvAdd(fnvAdd(fnvOffset, tok(i)), "\x00"), tok(i+1)), "\x00"), tok(i+2))
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// shingleHashesOf is shingleHashes over words already split.
func shingleHashesOf(words []string) []uint64 {
	var toks []string
	for _, w := range words {
		if !hasIdeographs(w) {
			toks = append(toks, w)
			continue
		}
		for _, r := range w {
			toks = append(toks, string(r))
		}
	}
	var out []uint64
	if len(toks) < 3 {
		out = append(out, hashString(strings.Join(toks, "\x00")))
	} else {
		for i := 0; i+3 <= len(toks); i++ {
			out = append(out, hashString(toks[i]+"\x00"+toks[i+1]+"\x00"+toks[i+2]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// norm is normalize of unit i's content, computed once for the passes that
// compare units (duplicates, cross-file and near duplicates).
func (f *file) norm(i int) string {
	if f.norms == nil {
		f.norms = make([]*string, len(f.doc.Units))
	}
	if p := f.norms[i]; p != nil {
		return *p
	}
	n := normalize(f.doc.Units[i].Content)
	f.norms[i] = &n
	return n
}
