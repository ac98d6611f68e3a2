package lossguard

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dreamkit/dream/evidence"
)

// HoldPrefix begins every reason the loss guard gives for holding a dream,
// or one of its files, for review. The root package's ParkLossGuard is the
// same text: a host tells a loss guard hold (one only a human may lift)
// from other reviews by it.
const HoldPrefix = "loss guard: "

// DefaultMaxUntraced is how many facts a model dream may delete without a
// trace elsewhere before it is held for review, when the budget given is
// not positive (a host's zero Settings).
const DefaultMaxUntraced = 3

// Changed is one file a dream changed, as the evidence check needs it: a
// held new file holds the files that link to it, and a deleted file links
// to nothing.
type Changed struct {
	Path           string // slash path in the memory dir
	Added, Deleted bool
}

// EvidenceInput is what JudgeEvidence judges: plain data, so that the
// judgement is a pure function of what the dream did and what its model
// was shown.
type EvidenceInput struct {
	// Corpus is what the model was shown, what the checks contradicted and
	// its checked citations.
	Corpus *evidence.Corpus
	// Ledger is the loss guard's (Verdict.Ledger); JudgeEvidence fills in
	// each entry's Change, Evidence and Held.
	Ledger []Entry
	// Changes are every file the dream changed, Markdown or not.
	Changes []Changed
	// ReadStaged reads a changed file as the dream left it; nil, nil when
	// it is gone. A file that cannot be read is taken to link to nothing.
	ReadStaged func(rel string) ([]byte, error)
	// MaxUntraced is the budget of facts deleted without a trace; not
	// positive means DefaultMaxUntraced.
	MaxUntraced int
}

// EvidenceVerdict is what the loss guard decides, at the scale of one fact,
// about a model dream's ledger.
type EvidenceVerdict struct {
	// Hold are files whose change must not land without review, each with
	// why (HoldPrefix first): a changed value nothing supports, or text
	// moved into such a file.
	Hold map[string]string
	// Whole, when set, stages the whole dream, and says why (without
	// HoldPrefix): too many facts deleted without a trace, or every change
	// held.
	Whole string
}

// JudgeEvidence judges a model dream's ledger (annotating it in place)
// against its evidence: a change to a specific value (a number, date,
// version, path, name, a negation) lands only if what the model was shown
// supports it, and no more than the budget of facts may go without a trace.
//
// Changes are held per file, not per unit: a file's changes hang together
// (a re-dated heading and the line under it, a port widened where another
// was dropped), so landing part of a file would make a version of it
// nobody wrote. A file that gave text to a held file is held with it, so
// that what moved is never missing from both; a new held file takes the
// files that link to it along.
func JudgeEvidence(in EvidenceInput) EvidenceVerdict {
	v := EvidenceVerdict{Hold: map[string]string{}}
	ledger, corpus := in.Ledger, in.Corpus
	var untraced []Entry
	for i := range ledger {
		e := &ledger[i]
		var ch evidence.Change
		var s evidence.Support
		ok := true
		if e.To != nil {
			ch, s, ok = corpus.Judge(e.To.File, e.Text, e.To.Text, e.Headings)
		}
		if !ch.Changed() {
			// Not a changed value: a fact whose words are gone (deleted,
			// or summarised away) counts against the budget, unless the
			// repository no longer bears it out.
			if !e.Lost || !e.Fact {
				continue
			}
			if s, ok := corpus.Contradicted(evidence.Values(e.Text)); ok {
				e.Evidence = &s
				continue
			}
			untraced = append(untraced, *e)
			continue
		}
		e.Change = &ch
		if ok {
			e.Evidence = &s
			continue
		}
		e.Held = HoldPrefix + noEvidence(ch)
		for _, f := range []string{e.To.File, e.File} {
			if _, held := v.Hold[f]; !held {
				v.Hold[f] = e.Held
			}
		}
	}
	budget := in.MaxUntraced
	if budget <= 0 {
		budget = DefaultMaxUntraced
	}
	if len(untraced) > budget {
		var us []string
		for _, e := range untraced {
			us = append(us, fmt.Sprintf("%s:%d %q", e.File, e.Line, clip(e.Text, 80)))
		}
		v.Whole = fmt.Sprintf("held for review: deletes %d facts without a trace elsewhere in memory, over the budget of %d (max_untraced_deletions): %s",
			len(untraced), budget, strings.Join(us, ", "))
		return v
	}
	if len(v.Hold) == 0 {
		return v
	}
	closeHolds(v.Hold, ledger, in.Changes, in.ReadStaged)
	all := true
	for _, c := range in.Changes {
		if _, ok := v.Hold[c.Path]; !ok {
			all = false
			if !Covers(c.Path) {
				// A file the ledger cannot read (nanobot's dream cursor,
				// which lands with the edits it consumed) may need the
				// held part: nothing lands without it.
				all = true
				break
			}
		}
	}
	if all {
		v.Whole = "held for review: " + heldList(v.Hold)
	}
	return v
}

// noEvidence says why a changed value is held.
func noEvidence(ch evidence.Change) string {
	if ch.Negation {
		return "the change turns a statement into its opposite, and no transcript or repository file shown to the model says so"
	}
	var was, now []string
	for _, x := range ch.Removed {
		was = append(was, x.Text)
	}
	for _, x := range ch.Added {
		now = append(now, x.Text)
	}
	return fmt.Sprintf("%s (was %s) appears in no transcript or repository file shown to the model, and nothing shown contradicts the old value",
		strings.Join(now, ", "), strings.Join(was, ", "))
}

// closeHolds adds to hold the files the held ones need: a file whose text
// went into a held file (landing it would leave that text in neither), one
// whose removed or rewritten text named a held file (a pointer to it), and
// one that links to a held new file (it would point at nothing).
func closeHolds(hold map[string]string, ledger []Entry, changes []Changed, readStaged func(rel string) ([]byte, error)) {
	for grew := true; grew; {
		grew = false
		for _, e := range ledger {
			if _, from := hold[e.File]; from {
				continue
			}
			if e.To != nil && e.To.File != e.File {
				if _, to := hold[e.To.File]; to {
					hold[e.File] = fmt.Sprintf("%sits %q went into %s, which is held", HoldPrefix, clip(e.Text, 60), e.To.File)
					grew = true
					continue
				}
			}
			for h := range hold {
				if strings.Contains(e.Text, h) {
					hold[e.File] = fmt.Sprintf("%sits %q names %s, which is held", HoldPrefix, clip(e.Text, 60), h)
					grew = true
					break
				}
			}
		}
		if readStaged == nil {
			continue
		}
		for _, c := range changes {
			if _, held := hold[c.Path]; held || c.Deleted {
				continue
			}
			for _, n := range changes {
				_, held := hold[n.Path]
				if !held || !n.Added {
					continue
				}
				if b, err := readStaged(c.Path); err == nil && strings.Contains(string(b), n.Path) {
					hold[c.Path] = fmt.Sprintf("%sit links to %s, which is held", HoldPrefix, n.Path)
					grew = true
					break
				}
			}
		}
	}
}

// heldList names the held files and why, in path order.
func heldList(hold map[string]string) string {
	paths := make([]string, 0, len(hold))
	for p := range hold {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		out = append(out, p+": "+strings.TrimPrefix(hold[p], HoldPrefix))
	}
	return strings.Join(out, "; ")
}

// LedgerSummary says what a model dream did from its ledger, never from
// the model's words: the files it changed (files), what became of the units
// it removed or rewrote, and what of it waits for review (held, as
// EvidenceVerdict.Hold).
func LedgerSummary(files int, ledger []Entry, held map[string]string) string {
	count := map[string]int{}
	facts, backed := 0, 0
	for _, e := range ledger {
		count[e.Fate]++
		if e.Lost && e.Fact && e.Change == nil {
			facts++
		}
		if e.Change != nil && e.Evidence != nil {
			backed++
		}
	}
	s := fmt.Sprintf("%d file%s changed", files, plural(files))
	var parts []string
	for _, f := range []string{Moved, Merged, Rewritten, Deleted} {
		if n := count[f]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, f))
		}
	}
	if len(parts) == 0 {
		s += "; no unit removed or rewritten"
	} else {
		s += "; units " + strings.Join(parts, ", ")
	}
	if facts > 0 {
		s += fmt.Sprintf("; %d fact%s left without a trace", facts, plural(facts))
	}
	if backed > 0 {
		s += fmt.Sprintf("; %d changed value%s backed by evidence", backed, plural(backed))
	}
	if len(held) > 0 {
		s += fmt.Sprintf("; %d file%s held for review: %s", len(held), plural(len(held)), heldList(held))
	}
	return s
}

// plural is the "s" of n things.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
