package eval

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Table renders scores as an aligned table with a totals row.
func Table(scores []Score) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tdefects\tmechanical\tprobes\tguards held\tregressions\tindex ok\toutside ok\ttokens\terror")
	var t Score
	budget, outside := 0, 0
	for _, s := range scores {
		fmt.Fprintf(w, "%s\t%d/%d\t%d/%d\t%d/%d\t%d/%d\t%d\t%s\t%s\t%d\t%s\n", s.Scenario,
			s.DefectsFixed, s.DefectsTotal, s.MechanicalFixed, s.MechanicalTotal,
			s.ProbesRetained, s.ProbesTotal, s.GuardsTotal-s.Regressions, s.GuardsTotal, s.Regressions, yes(s.IndexWithinBudget), yes(s.OutsideUntouched), s.Tokens, oneLine(s.Err))
		t.DefectsFixed += s.DefectsFixed
		t.DefectsTotal += s.DefectsTotal
		t.MechanicalFixed += s.MechanicalFixed
		t.MechanicalTotal += s.MechanicalTotal
		t.ProbesRetained += s.ProbesRetained
		t.ProbesTotal += s.ProbesTotal
		t.Regressions += s.Regressions
		t.GuardsTotal += s.GuardsTotal
		t.Tokens += s.Tokens
		if s.IndexWithinBudget {
			budget++
		}
		if s.OutsideUntouched {
			outside++
		}
		if s.Err != "" {
			t.Err = fmt.Sprintf("%d failed", countErr(scores))
		}
	}
	fmt.Fprintf(w, "TOTAL (%d)\t%d/%d\t%d/%d\t%d/%d\t%d/%d\t%d\t%d/%d\t%d/%d\t%d\t%s\n", len(scores),
		t.DefectsFixed, t.DefectsTotal, t.MechanicalFixed, t.MechanicalTotal, t.ProbesRetained, t.ProbesTotal,
		t.GuardsTotal-t.Regressions, t.GuardsTotal, t.Regressions, budget, len(scores), outside, len(scores), t.Tokens, t.Err)
	w.Flush()
	return b.String()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func countErr(scores []Score) int {
	n := 0
	for _, s := range scores {
		if s.Err != "" {
			n++
		}
	}
	return n
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// Legend explains each column of Table, one per line, for people reading
// the table rather than the JSON.
const Legend = `  defects      planted defects the dream fixed / planted in the scenario
  mechanical   of those, the ones the offline engine must fix: fixed / expected
  probes       facts the dream must keep that are still in memory / probes
  guards held  properties true before the dream (a decoy left alone, no secret in memory) still true / guards
  regressions  guards the dream broke (any is a failure)
  index ok     the index fits the agent's load budget afterwards (lines and bytes)
  outside ok   nothing outside the memory dir changed (the repository, the transcripts)
  tokens       model tokens the dream spent (0 with the offline engine)
  error        why a scenario could not be scored
`
