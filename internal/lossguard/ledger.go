package lossguard

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/memory"
)

// Fates of a unit a model dream removed from its file or rewrote, as in
// Entry.Fate.
const (
	// Moved: the same text is now a new unit of another file.
	Moved = "moved"
	// Merged: the text is now inside another unit (a longer one, or a copy
	// that was already there).
	Merged = "merged"
	// Rewritten: a new unit in its place keeps most of its words.
	Rewritten = "rewritten"
	// Deleted: no trace of it is left in the memory.
	Deleted = "deleted"
)

// Entry accounts for one unit a model dream removed or rewrote: where its
// text went, or that it went nowhere. The ledger is what a report, an
// audit record and the evidence check are built from, never the model's own
// account.
type Entry struct {
	Fate string `json:"fate"`
	// Unit is the unit as it was before the dream.
	Unit
	// Headings are the headings it stood under, outermost first.
	Headings []string `json:"headings,omitempty"`
	// To is where it went (for every fate but Deleted): the unit it is now,
	// or the unit that holds it.
	To *Unit `json:"to,omitempty"`
	// Fact is false for what holds no fact of its own: a heading, front
	// matter, an HTML comment, a pointer to a memory file.
	Fact bool `json:"fact"`
	// Lost is set when no trace of the text is left: it went nowhere
	// (Deleted), or the loss guard finds neither the same words anywhere
	// nor most of them in one unit of its file. A unit rewritten with its
	// values masked ("Port: 8082" → "Port: 8081") or summarised away into
	// a vaguer line is paired (To) and lost.
	Lost bool `json:"lost,omitempty"`

	// The evidence check's judgement (see package evidence), filled after
	// the ledger: the values the change replaced or the polarity it turned,
	// where its evidence is, or why it is held for review.
	Change   *evidence.Change  `json:"change,omitempty"`
	Evidence *evidence.Support `json:"evidence,omitempty"`
	Held     string            `json:"held,omitempty"`
}

// Ranks of a candidate destination: better first.
const (
	rankExact     = iota // the same words as a unit of the file
	rankContained        // the words inside a longer unit
	rankPaired           // most of the words (values aside) in a unit
)

// Tiers of a candidate destination, better first: a unit's text found in
// a new unit anywhere, or again in its own file; a new unit of its own file
// that keeps most of its words; the same words in an old unit of another
// file (a short "Port: 8081" is said in many places, so this is weaker than
// a rewrite in place); an old unit of its own file that keeps most of its
// words.
const (
	tierFound = iota
	tierRewritten
	tierFoundElsewhere
	tierPairedOld
)

// dest is one place a gone unit's text may have gone.
type dest struct {
	tier  int
	rank  int
	score float64 // of rankPaired: the share of the unit's words kept
	fresh bool    // the unit is new in its file (not there before)
	to    Unit
	// inPlace: the unit replaced it where it stood, keeping few of its
	// words (see ledger.inPlace).
	inPlace bool
}

// better orders candidates: tier, rank, then a new unit over an old one,
// then the higher score, then file and line, so that the ledger does not
// depend on the order files were searched in.
func (d dest) better(o *dest) bool {
	if o == nil {
		return true
	}
	if d.tier != o.tier {
		return d.tier < o.tier
	}
	if d.rank != o.rank {
		return d.rank < o.rank
	}
	if d.fresh != o.fresh {
		return d.fresh
	}
	if d.score != o.score {
		return d.score > o.score
	}
	if c := cmp.Compare(d.to.File, o.to.File); c != 0 {
		return c < 0
	}
	return d.to.Line < o.to.Line
}

// ledger collects, for every unit that left its file, the best place its
// text went: found anywhere exactly or inside a unit, or paired (most of
// its words kept, values aside) in its own file, in a file that received
// the rest of its file's text, or with a new unit of any changed file (see
// entries).
type ledger struct {
	mu    sync.Mutex
	gone  []goneUnit
	skel  []map[string]bool // each unit's words, values masked
	best  []*dest           // exact or contained anywhere, paired in its own file
	cross []map[string]*dest
	fresh map[string][]afterLeaf // the new facts of each changed file
}

func newLedger(gone []goneUnit) *ledger {
	l := &ledger{gone: gone, skel: make([]map[string]bool, len(gone)), best: make([]*dest, len(gone)), cross: make([]map[string]*dest, len(gone))}
	for i, g := range gone {
		l.skel[i] = skeleton(g.Text)
	}
	return l
}

// skeleton is a unit's words with every value replaced by its kind, so
// that "Port: 8081" and "Port: 8082" share theirs.
func skeleton(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range evidence.Skeleton(text) {
		out[w] = true
	}
	return out
}

// afterLeaf is a unit of a file after the dream, as the ledger compares it.
type afterLeaf struct {
	Unit
	norm  string
	fresh bool
	path  []string
}

// scan looks for the gone units (ids into l.gone; nil: all of them) among
// the units of one file after the dream. pair says whether a unit may pair
// there (the file changed; an unchanged file only ever held copies).
func (l *ledger) scan(rel string, ls []leaf, before map[string]int, ids []int, pair bool) {
	if len(ls) == 0 {
		return
	}
	units := make([]afterLeaf, len(ls))
	exact := map[string][]int{}
	seen := map[string]int{}
	for i, x := range ls {
		units[i] = afterLeaf{Unit: Unit{File: rel, Line: x.line, Text: x.text}, norm: x.norm(), path: x.path}
		// A text is new in the file when it is there more often than it
		// was (before is nil for a file the dream did not change).
		seen[x.text]++
		units[i].fresh = before != nil && seen[x.text] > before[x.text]
		exact[units[i].norm] = append(exact[units[i].norm], i)
	}
	if pair && before != nil {
		var fresh []afterLeaf
		for k, u := range units {
			if u.fresh && isFact(ls[k].kind, ls[k].text) {
				fresh = append(fresh, u)
			}
		}
		l.mu.Lock()
		if l.fresh == nil {
			l.fresh = map[string][]afterLeaf{}
		}
		l.fresh[rel] = fresh
		l.mu.Unlock()
	}
	var words map[string][]int // skeleton word → units, built on first need
	visit := func(i int) {
		g := &l.gone[i]
		var found *dest
		offer := func(d dest) {
			if d.better(found) {
				found = &d
			}
		}
		tier := func(fresh bool) int {
			if fresh || rel == g.File {
				return tierFound
			}
			return tierFoundElsewhere
		}
		for _, k := range exact[g.norm] {
			offer(dest{tier: tier(units[k].fresh), rank: rankExact, fresh: units[k].fresh, to: units[k].Unit})
		}
		if (found == nil || found.tier > tierFound) && len(g.norm) >= minMergedLen {
			for k := range units {
				if strings.Contains(units[k].norm, g.norm) {
					offer(dest{tier: tier(units[k].fresh), rank: rankContained, fresh: units[k].fresh, to: units[k].Unit})
				}
			}
		}
		var paired *dest
		if (found == nil || found.tier > tierFound) && pair && len(l.skel[i]) > 0 {
			if words == nil {
				words = map[string][]int{}
				for k := range units {
					for w := range skeleton(units[k].Text) {
						if len(words[w]) < maxPostings {
							words[w] = append(words[w], k)
						}
					}
				}
			}
			paired = l.pairIn(i, units, words, rel == g.File)
		}
		l.record(i, rel, found, paired)
	}
	if ids == nil {
		for i := range l.gone {
			visit(i)
		}
		return
	}
	for _, i := range ids {
		visit(i)
	}
}

// record keeps what scan found in file rel for gone unit i: found (a copy
// of its text) when it beats the best so far, and paired (a unit that keeps
// most of its words) as a rewrite in its own file, or else as its
// candidate in rel, which entries weighs against the other files'.
func (l *ledger) record(i int, rel string, found, paired *dest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if found != nil && found.better(l.best[i]) {
		l.best[i] = found
	}
	if paired == nil {
		return
	}
	if rel == l.gone[i].File {
		if paired.fresh {
			paired.tier = tierRewritten
		} else {
			paired.tier = tierPairedOld
		}
		if paired.better(l.best[i]) {
			l.best[i] = paired
		}
		return
	}
	if l.cross[i] == nil {
		l.cross[i] = map[string]*dest{}
	}
	l.cross[i][rel] = paired
}

// pairIn is the unit of units that keeps most of gone unit i's words
// (values aside): at least minKept of them for a unit of three words or
// more; for a shorter one ("Port: 8082", "## 2026-03-02") all of them, in a
// new unit, or exactly them in any. In its own file (own) an old unit
// counts only under other headings than the gone unit stood under: a
// line dropped beside its like ("rule 1" gone, "rule 5" kept in the same
// section) was deleted, while one whose section was merged into another
// ("## Billing" into "## Auth and billing") went into what is there.
func (l *ledger) pairIn(i int, units []afterLeaf, words map[string][]int, own bool) *dest {
	ws := l.skel[i]
	count := map[int]int{}
	for w := range ws {
		for _, k := range words[w] {
			count[k]++
		}
	}
	var best *dest
	for k, n := range count {
		score := float64(n) / float64(len(ws))
		u := units[k]
		if own && !u.fresh && slices.Equal(u.path, l.gone[i].path) {
			continue
		}
		switch {
		case len(ws) >= 3 && score >= minKept:
		case score == 1 && (u.fresh || len(skeleton(u.Text)) == len(ws)):
		default:
			continue
		}
		d := dest{rank: rankPaired, score: score, fresh: u.fresh, to: u.Unit}
		if d.better(best) {
			best = &d
		}
	}
	return best
}

// entries settles the ledger: a unit with no place found in its own file
// or anywhere exactly may have been paired into another changed file: into
// a new unit there ("Port: 8082" gone from billing.md, "Port: 8081 (auth
// and billing)" new in auth.md), or into any unit of a file that received
// other text of its file (the files its neighbours went to).
func (l *ledger) entries() []Entry {
	dests := map[string]map[string]bool{}
	for i, g := range l.gone {
		if b := l.best[i]; b != nil && b.fresh && b.to.File != g.File {
			if dests[g.File] == nil {
				dests[g.File] = map[string]bool{}
			}
			dests[g.File][b.to.File] = true
		}
	}
	out := make([]Entry, len(l.gone))
	best := make([]*dest, len(l.gone))
	for i, g := range l.gone {
		b := l.best[i]
		if b == nil { // a file its neighbours went to first
			for file, d := range l.cross[i] {
				if dests[g.File][file] && d.better(b) {
					b = d
				}
			}
		}
		if b == nil {
			for _, d := range l.cross[i] {
				if d.fresh && d.better(b) {
					b = d
				}
			}
		}
		best[i] = b
	}
	l.inPlace(best)
	for i, g := range l.gone {
		b := best[i]
		e := Entry{Unit: g.Unit, Headings: g.path, Fact: g.fact, Fate: Deleted, Lost: b == nil || b.inPlace}
		if b != nil {
			to := b.to
			e.To = &to
			switch {
			case b.rank == rankExact && b.fresh && to.File != g.File:
				e.Fate = Moved
			case b.fresh && b.rank != rankContained:
				e.Fate = Rewritten
			default:
				e.Fate = Merged
			}
		}
		out[i] = e
	}
	return out
}

// inPlace pairs a fact that went nowhere with a new fact its file gained
// under the same headings, nearest first, that no other gone unit went
// to: a line replaced in place by one that keeps few of its words ("Never
// deploy on Fridays." → "Deploying on Fridays is fine.") is a rewrite
// whose words are gone, for the evidence check to judge, not a deletion
// beside an unrelated addition.
func (l *ledger) inPlace(best []*dest) {
	used := map[Unit]bool{}
	for _, b := range best {
		if b != nil {
			used[b.to] = true
		}
	}
	for i, g := range l.gone {
		if best[i] != nil || !g.fact {
			continue
		}
		var near *afterLeaf
		for k, u := range l.fresh[g.File] {
			if used[u.Unit] || !slices.Equal(u.path, g.path) {
				continue
			}
			if near == nil || abs(u.Line-g.Line) < abs(near.Line-g.Line) {
				near = &l.fresh[g.File][k]
			}
		}
		if near != nil {
			used[near.Unit] = true
			best[i] = &dest{tier: tierRewritten, rank: rankPaired, fresh: true, to: near.Unit, inPlace: true}
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// isFact says whether a unit of kind holds a fact of its own.
func isFact(kind memory.UnitKind, text string) bool {
	switch kind {
	case memory.UnitHeading, memory.UnitFrontmatter, memory.UnitHTML, memory.UnitBreak:
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		l := memory.ParseIndexLine(1, line)
		if _, local := memory.LocalTarget(l.Target); !l.IsPointer || !local {
			return true
		}
	}
	return false
}
