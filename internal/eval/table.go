package eval

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Table renders scores as an aligned table with a totals row. model says
// whether a model dreamed after the offline pass (its column is "-"
// otherwise).
func Table(scores []Score, model bool) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tresult\tdefects\tmechanical\tmodel\tprobes\tguards held\tregressions\tindex ok\toutside ok\ttokens\tproblem")
	var t Score
	budget, outside, passed := 0, 0, 0
	ratio := func(a, b int) string {
		if !model {
			return "-"
		}
		return fmt.Sprintf("%d/%d", a, b)
	}
	for _, s := range scores {
		result, problem := "ok", ""
		if ps := s.Problems; len(ps) > 0 {
			result, problem = "FAIL", ps[0]
			if len(ps) > 1 {
				problem += fmt.Sprintf(" (+%d more)", len(ps)-1)
			}
		} else {
			passed++
		}
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%d/%d\t%s\t%d/%d\t%d/%d\t%d\t%s\t%s\t%d\t%s\n", s.Scenario, result,
			s.DefectsFixed, s.DefectsTotal, s.MechanicalFixed, s.MechanicalTotal, ratio(s.ModelFixed, s.ModelTotal),
			s.ProbesRetained, s.ProbesTotal, s.GuardsTotal-s.Regressions, s.GuardsTotal, s.Regressions, yes(s.IndexWithinBudget), yes(s.OutsideUntouched), s.Tokens, oneLine(problem))
		t.DefectsFixed += s.DefectsFixed
		t.DefectsTotal += s.DefectsTotal
		t.MechanicalFixed += s.MechanicalFixed
		t.MechanicalTotal += s.MechanicalTotal
		t.ModelFixed += s.ModelFixed
		t.ModelTotal += s.ModelTotal
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
	}
	fmt.Fprintf(w, "TOTAL (%d)\t%d/%d ok\t%d/%d\t%d/%d\t%s\t%d/%d\t%d/%d\t%d\t%d/%d\t%d/%d\t%d\t\n", len(scores), passed, len(scores),
		t.DefectsFixed, t.DefectsTotal, t.MechanicalFixed, t.MechanicalTotal, ratio(t.ModelFixed, t.ModelTotal), t.ProbesRetained, t.ProbesTotal,
		t.GuardsTotal-t.Regressions, t.GuardsTotal, t.Regressions, budget, len(scores), outside, len(scores), t.Tokens)
	w.Flush()
	return b.String()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
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
const Legend = `  result       ok, or FAIL: an error, a held dream, a lost probe, a broken guard, a write outside memory, an index past the budget, or a defect the engine was expected to fix left unfixed
  defects      planted defects fixed / planted in the scenario
  mechanical   of those, the ones the offline engine must fix: fixed / expected
  model        with a model: the defects the offline pass left that the model's own dream fixed / left to it ("-" for the offline engine); every one is expected
  probes       facts the dream must keep that are still in memory / probes
  guards held  properties true before the dream (a decoy left alone, no secret in memory) still true / guards
  regressions  guards the dream broke (any is a failure)
  index ok     the index fits what the agent loads afterwards (lines and bytes, counted as the agent counts them)
  outside ok   nothing outside the memory dir changed (the repository, the transcripts)
  tokens       model tokens the dreams spent (0 with the offline engine)
  problem      the first reason the scenario fails (--json lists them all)
`
