package eval

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/memory"
	"github.com/dreamkit/dream/llm"
)

// DreamFunc runs a dream on ws; the caller decides whether offline or with
// a model. It returns the tokens spent.
type DreamFunc func(ctx context.Context, s Scenario, ws Workspace) (llm.Usage, error)

// Score is one scenario's result.
type Score struct {
	Scenario string `json:"scenario"`
	// DefectsTotal counts the planted defects (non-guard expectations, all
	// of which fail before the dream); DefectsFixed those that hold after.
	DefectsFixed    int `json:"defects_fixed"`
	DefectsTotal    int `json:"defects_total"`
	MechanicalFixed int `json:"mechanical_fixed"`
	MechanicalTotal int `json:"mechanical_total"`
	// Regressions counts guards (properties that held before: a decoy left
	// alone, no secret in memory) broken by the dream; GuardsTotal counts
	// the guards.
	Regressions       int   `json:"regressions"`
	GuardsTotal       int   `json:"guards_total"`
	ProbesRetained    int   `json:"probes_retained"`
	ProbesTotal       int   `json:"probes_total"`
	IndexWithinBudget bool  `json:"index_within_budget"`
	OutsideUntouched  bool  `json:"outside_untouched"`
	Tokens            int64 `json:"tokens"`
	// Failed names the expectations and probes that do not hold after.
	Failed []string `json:"failed,omitempty"`
	// NotPlanted names defects that already held before the dream: the
	// scenario is wrong, not the dream.
	NotPlanted []string `json:"not_planted,omitempty"`
	Err        string   `json:"error,omitempty"`
}

// Run scores each scenario in its own scratch workspace. A scenario whose
// setup or dream fails is scored with Err set; Run itself fails only when
// ctx ends.
func Run(ctx context.Context, scenarios []Scenario, dream DreamFunc) ([]Score, error) {
	var scores []Score
	for _, s := range scenarios {
		if err := ctx.Err(); err != nil {
			return scores, fmt.Errorf("eval: %w", err)
		}
		scores = append(scores, runOne(ctx, s, dream))
	}
	return scores, nil
}

func runOne(ctx context.Context, s Scenario, dream DreamFunc) Score {
	sc := Score{Scenario: s.Name, ProbesTotal: len(s.Probes)}
	root, err := os.MkdirTemp("", "dream-eval-*")
	if err != nil {
		sc.Err = fmt.Sprintf("workspace: %v", err)
		return sc
	}
	defer os.RemoveAll(root)
	ws, err := prepare(s, root)
	if err != nil {
		sc.Err = err.Error()
		return sc
	}
	before, err := takeSnapshot(ws.MemoryDir)
	if err != nil {
		sc.Err = fmt.Sprintf("before: %v", err)
		return sc
	}
	outside, err := outsideHash(ws)
	if err != nil {
		sc.Err = fmt.Sprintf("before: %v", err)
		return sc
	}
	usage, derr := dream(ctx, s, ws)
	sc.Tokens = usage.Total()
	if derr != nil {
		sc.Err = derr.Error()
	}
	after, err := takeSnapshot(ws.MemoryDir)
	if err != nil {
		sc.Err = fmt.Sprintf("after: %v", err)
		return sc
	}
	if o, err := outsideHash(ws); err == nil {
		sc.OutsideUntouched = o == outside
	}
	for _, e := range s.Expects {
		wasOK, isOK := e.holds(before, before), e.holds(after, before)
		if e.Guard {
			sc.GuardsTotal++
			if !isOK {
				sc.Regressions++
				sc.Failed = append(sc.Failed, "guard "+e.String())
			}
			continue
		}
		if wasOK {
			sc.NotPlanted = append(sc.NotPlanted, e.String())
		}
		sc.DefectsTotal++
		if e.Mechanical {
			sc.MechanicalTotal++
		}
		if isOK {
			sc.DefectsFixed++
			if e.Mechanical {
				sc.MechanicalFixed++
			}
		} else {
			sc.Failed = append(sc.Failed, e.String())
		}
	}
	for _, p := range s.Probes {
		if !probeHolds(after, p) {
			sc.Failed = append(sc.Failed, "probe "+p.String())
			continue
		}
		sc.ProbesRetained++
	}
	// As the scenario's agent counts its index (host.IndexLimitOf); a
	// layout whose agent loads no index has none to keep within budget.
	lim, ok := host.IndexLimitOf(s.Host)
	sc.IndexWithinBudget = after.dir.Index == nil || !ok || lim.Fits(lim.Count([]byte(after.files[memory.IndexFile])))
	return sc
}

// probeHolds reports whether the probe's text is in its file (or in any
// memory file) at least Count times, ignoring differences in whitespace.
func probeHolds(s *snapshot, p Probe) bool {
	want := collapse(p.Text)
	n := 0
	for rel, text := range s.files {
		if p.File != "" && rel != p.File || p.File == "" && !strings.HasSuffix(strings.ToLower(rel), ".md") {
			continue
		}
		n += strings.Count(collapse(text), want)
	}
	return n >= max(p.Count, 1)
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// outsideHash digests what a dream must never write: the repository and the
// transcripts.
func outsideHash(ws Workspace) (string, error) {
	r, err := hashTree(ws.RepoDir)
	if err != nil {
		return "", err
	}
	t, err := hashTree(ws.SessionsDir)
	if err != nil {
		return "", err
	}
	return r + t, nil
}
