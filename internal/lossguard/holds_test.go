package lossguard

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/dreamkit/dream/evidence"
)

// TestJudgeEvidence: which files a changed value without evidence holds,
// which files go with them, and when the whole dream waits instead.
func TestJudgeEvidence(t *testing.T) {
	const unbacked = HoldPrefix + "9091 (was 8081) appears in no transcript or repository file shown to the model, and nothing shown contradicts the old value"
	port := func(file string) Entry { // "Port: 8081" rewritten in place to 9091
		return Entry{Fate: Rewritten, Unit: Unit{File: file, Line: 3, Text: "- Port: 8081"}, To: &Unit{File: file, Line: 3, Text: "- Port: 9091"}, Fact: true}
	}
	deleted := func(file string, line int, text string) Entry {
		return Entry{Fate: Deleted, Unit: Unit{File: file, Line: line, Text: text}, Fact: true, Lost: true}
	}
	mod := func(paths ...string) []Changed {
		var cs []Changed
		for _, p := range paths {
			cs = append(cs, Changed{Path: p})
		}
		return cs
	}
	facts := []Entry{deleted("ops.md", 3, "- Deploys are frozen on Fridays."), deleted("ops.md", 4, "- Backups are kept for 35 days."),
		deleted("ops.md", 5, "- Disk alerts page at 95%."), deleted("ops.md", 6, "- Logs are kept for 14 days.")}
	const overBudget = `held for review: deletes 4 facts without a trace elsewhere in memory, over the budget of 3 (max_untraced_deletions): ops.md:3 "- Deploys are frozen on Fridays.", ops.md:4 "- Backups are kept for 35 days.", ops.md:5 "- Disk alerts page at 95%.", ops.md:6 "- Logs are kept for 14 days."`
	tests := []struct {
		name    string
		in      EvidenceInput
		staged  map[string]string // ReadStaged's files
		hold    map[string]string
		whole   string
		held    []string // each ledger entry's Held
		support []string // each ledger entry's Evidence.By ("" for none)
	}{
		{name: "a backed change lands",
			in: EvidenceInput{Corpus: evidence.NewCorpus([]evidence.Shown{{Tool: "read", Source: "server.go", Text: "const port = 9091"}}, nil, nil),
				Ledger: []Entry{port("auth.md")}, Changes: mod("auth.md")},
			hold: map[string]string{}, held: []string{""}, support: []string{"shown"}},
		{name: "an unbacked change is held, the rest lands",
			in:   EvidenceInput{Ledger: []Entry{port("auth.md")}, Changes: mod("auth.md", "notes.md")},
			hold: map[string]string{"auth.md": unbacked}, held: []string{unbacked}, support: []string{""}},
		{name: "every change held: the whole dream waits",
			in:    EvidenceInput{Ledger: []Entry{port("auth.md")}, Changes: mod("auth.md")},
			hold:  map[string]string{"auth.md": unbacked},
			whole: "held for review: auth.md: 9091 (was 8081) appears in no transcript or repository file shown to the model, and nothing shown contradicts the old value",
			held:  []string{unbacked}, support: []string{""}},
		{name: "a file the ledger cannot read holds the whole dream",
			in:    EvidenceInput{Ledger: []Entry{port("auth.md")}, Changes: mod("auth.md", "notes.md", ".cursor")},
			hold:  map[string]string{"auth.md": unbacked},
			whole: "held for review: auth.md: 9091 (was 8081) appears in no transcript or repository file shown to the model, and nothing shown contradicts the old value",
			held:  []string{unbacked}, support: []string{""}},
		{name: "a value moved into another file holds both",
			in: EvidenceInput{Ledger: []Entry{{Fate: Rewritten, Unit: Unit{File: "billing.md", Line: 3, Text: "- Port: 8081"}, To: &Unit{File: "auth.md", Line: 5, Text: "- Port: 9091"}, Fact: true}},
				Changes: mod("auth.md", "billing.md", "notes.md")},
			hold: map[string]string{"auth.md": unbacked, "billing.md": unbacked}, held: []string{unbacked}, support: []string{""}},
		{name: "a file whose text went into a held file is held with it",
			in: EvidenceInput{Ledger: []Entry{port("auth.md"),
				{Fate: Moved, Unit: Unit{File: "billing.md", Line: 4, Text: "- Owner: team borealis,\n  paged through PagerDuty"}, To: &Unit{File: "auth.md", Line: 5, Text: "- Owner: team borealis, paged through PagerDuty"}, Fact: true}},
				Changes: mod("auth.md", "billing.md", "notes.md")},
			hold: map[string]string{"auth.md": unbacked, "billing.md": HoldPrefix + `its "- Owner: team borealis, paged through PagerDuty" went into auth.md, which is held`},
			held: []string{unbacked, ""}, support: []string{"", ""}},
		{name: "a file whose removed text names a held file is held with it",
			in: EvidenceInput{Ledger: []Entry{port("auth.md"),
				{Fate: Deleted, Unit: Unit{File: "MEMORY.md", Line: 3, Text: "- [Auth](auth.md) — " + strings.Repeat("the auth service ", 5)}}},
				Changes: mod("auth.md", "MEMORY.md", "notes.md")},
			hold: map[string]string{"auth.md": unbacked, "MEMORY.md": HoldPrefix + `its "- [Auth](auth.md) — the auth service the auth service the a…" names auth.md, which is held`},
			held: []string{unbacked, ""}, support: []string{"", ""}},
		{name: "a held new file holds the files that link to it, not a deleted one",
			in: EvidenceInput{Ledger: []Entry{{Fate: Moved, Unit: Unit{File: "billing.md", Line: 5, Text: "- Invoices render in 30 seconds."}, To: &Unit{File: "payments.md", Line: 3, Text: "- Invoices render in 45 seconds."}, Fact: true}},
				Changes: []Changed{{Path: "payments.md", Added: true}, {Path: "billing.md"}, {Path: "MEMORY.md"}, {Path: "old.md", Deleted: true}, {Path: "notes.md"}}},
			staged: map[string]string{"MEMORY.md": "- [Payments](payments.md)\n", "old.md": "see payments.md", "notes.md": "# Notes\n"},
			hold: map[string]string{
				"payments.md": HoldPrefix + "45 seconds (was 30 seconds) appears in no transcript or repository file shown to the model, and nothing shown contradicts the old value",
				"billing.md":  HoldPrefix + "45 seconds (was 30 seconds) appears in no transcript or repository file shown to the model, and nothing shown contradicts the old value",
				"MEMORY.md":   HoldPrefix + "it links to payments.md, which is held"},
			held:    []string{HoldPrefix + "45 seconds (was 30 seconds) appears in no transcript or repository file shown to the model, and nothing shown contradicts the old value"},
			support: []string{""}},
		{name: "a negation without evidence is held",
			in: EvidenceInput{Ledger: []Entry{{Fate: Rewritten, Unit: Unit{File: "ops.md", Line: 3, Text: "- Never deploy on Fridays."}, To: &Unit{File: "ops.md", Line: 3, Text: "- Deploy on Fridays."}, Fact: true}},
				Changes: mod("ops.md", "notes.md")},
			hold:    map[string]string{"ops.md": HoldPrefix + "the change turns a statement into its opposite, and no transcript or repository file shown to the model says so"},
			held:    []string{HoldPrefix + "the change turns a statement into its opposite, and no transcript or repository file shown to the model says so"},
			support: []string{""}},
		{name: "facts deleted without a trace over the default budget",
			in:   EvidenceInput{Ledger: slices.Clone(facts), Changes: mod("ops.md")},
			hold: map[string]string{}, whole: overBudget, held: []string{"", "", "", ""}, support: []string{"", "", "", ""}},
		{name: "within a budget of four",
			in:   EvidenceInput{Ledger: slices.Clone(facts), Changes: mod("ops.md"), MaxUntraced: 4},
			hold: map[string]string{}, held: []string{"", "", "", ""}, support: []string{"", "", "", ""}},
		{name: "over the budget, the whole dream waits whatever else is held",
			in:   EvidenceInput{Ledger: append(slices.Clone(facts), port("auth.md")), Changes: mod("ops.md", "auth.md")},
			hold: map[string]string{"auth.md": unbacked}, whole: overBudget, held: []string{"", "", "", "", unbacked}, support: []string{"", "", "", "", ""}},
		{name: "a contradicted fact and what holds no fact are not counted",
			in: EvidenceInput{Corpus: evidence.NewCorpus(nil, []evidence.Contradiction{{Value: "internal/cfg/run.go", Why: "no such file"}}, nil),
				Ledger:  append(slices.Clone(facts[:3]), deleted("ops.md", 7, "- Builds run internal/cfg/run.go."), Entry{Fate: Deleted, Unit: Unit{File: "ops.md", Line: 1, Text: "# Ops"}, Lost: true}),
				Changes: mod("ops.md")},
			hold: map[string]string{}, held: []string{"", "", "", "", ""}, support: []string{"", "", "", "contradicted", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in.Corpus == nil {
				tt.in.Corpus = evidence.NewCorpus(nil, nil, nil)
			}
			tt.in.ReadStaged = func(rel string) ([]byte, error) {
				if b, ok := tt.staged[rel]; ok {
					return []byte(b), nil
				}
				return nil, nil
			}
			v := JudgeEvidence(tt.in)
			if !maps.Equal(v.Hold, tt.hold) {
				t.Errorf("hold:\n got %q\nwant %q", v.Hold, tt.hold)
			}
			if v.Whole != tt.whole {
				t.Errorf("whole:\n got %q\nwant %q", v.Whole, tt.whole)
			}
			var held, support []string
			for _, e := range tt.in.Ledger {
				held = append(held, e.Held)
				by := ""
				if e.Evidence != nil {
					by = e.Evidence.By
				}
				support = append(support, by)
			}
			if !slices.Equal(held, tt.held) || !slices.Equal(support, tt.support) {
				t.Errorf("ledger held %q, support %q; want %q, %q", held, support, tt.held, tt.support)
			}
		})
	}
}

// TestLedgerSummary: what a model dream did, told from its ledger, in the
// words a report, the audit history and the CLI carry.
func TestLedgerSummary(t *testing.T) {
	change := &evidence.Change{}
	backing := &evidence.Support{By: "shown"}
	tests := []struct {
		files  int
		ledger []Entry
		held   map[string]string
		want   string
	}{
		{1, nil, nil, "1 file changed; no unit removed or rewritten"},
		{3, []Entry{{Fate: Deleted, Fact: true, Lost: true}, {Fate: Moved}, {Fate: Merged}, {Fate: Deleted, Lost: true}, {Fate: Rewritten, Fact: true, Lost: true, Change: change}},
			nil, "3 files changed; units 1 moved, 1 merged, 1 rewritten, 2 deleted; 1 fact left without a trace"},
		{2, []Entry{{Fate: Deleted, Fact: true, Lost: true}, {Fate: Deleted, Fact: true, Lost: true}, {Fate: Rewritten, Change: change, Evidence: backing}, {Fate: Rewritten, Change: change, Evidence: backing}},
			nil, "2 files changed; units 2 rewritten, 2 deleted; 2 facts left without a trace; 2 changed values backed by evidence"},
		{2, []Entry{{Fate: Rewritten, Change: change, Evidence: backing}, {Fate: Rewritten, Change: change}},
			map[string]string{"b.md": HoldPrefix + "its x went into a.md, which is held", "a.md": HoldPrefix + "9091 (was 8081) lacks evidence"},
			"2 files changed; units 2 rewritten; 1 changed value backed by evidence; 2 files held for review: a.md: 9091 (was 8081) lacks evidence; b.md: its x went into a.md, which is held"},
		{0, nil, map[string]string{"a.md": "unprefixed"}, "0 files changed; no unit removed or rewritten; 1 file held for review: a.md: unprefixed"},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := LedgerSummary(tt.files, tt.ledger, tt.held); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
