package eval

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dreamkit/dream/internal/indexcount"
	"github.com/dreamkit/dream/internal/memory"
	"github.com/dreamkit/dream/llm"
)

// DreamFunc runs a dream on ws; the caller decides which engine. It says
// what the dream did, as far as scoring needs.
type DreamFunc func(ctx context.Context, s Scenario, ws Workspace) (Outcome, error)

// Outcome is what one dream did.
type Outcome struct {
	Usage llm.Usage
	// Held is why the dream was staged for review instead of landing, ""
	// when it landed (or changed nothing). A held dream fixed nothing.
	Held string
}

// Engine is what a run scores: the offline engine alone (Model nil), or
// the offline pass and then a model dream, two dreams, so that the model
// is scored on what it did itself and not on the mechanical fixes the
// offline pass made before it.
type Engine struct {
	Offline, Model DreamFunc
}

// Score is one scenario's result.
type Score struct {
	Scenario string `json:"scenario"`
	// DefectsTotal counts the planted defects (non-guard expectations, all
	// of which fail before the dream); DefectsFixed those that hold after.
	DefectsFixed    int `json:"defects_fixed"`
	DefectsTotal    int `json:"defects_total"`
	MechanicalFixed int `json:"mechanical_fixed"`
	MechanicalTotal int `json:"mechanical_total"`
	// ModelFixed counts, with a model, the defects left after the offline
	// pass that the model's dream fixed; ModelTotal those left to it.
	ModelFixed int `json:"model_fixed"`
	ModelTotal int `json:"model_total"`
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
	// Held is why a dream was staged for review instead of landing.
	Held string `json:"held,omitempty"`
	// Failed names the expectations and probes that do not hold after.
	Failed []string `json:"failed,omitempty"`
	// Unfixed names the defects the engine was expected to fix and did
	// not: the mechanical ones for the offline engine, every one with a
	// model.
	Unfixed []string `json:"unfixed,omitempty"`
	// NotPlanted names defects that already held before the dream: the
	// scenario is wrong, not the dream.
	NotPlanted []string `json:"not_planted,omitempty"`
	Err        string   `json:"error,omitempty"`
	// Problems say why the scenario fails; none when it passes.
	Problems []string `json:"problems,omitempty"`
}

// problems says why the scenario fails, nothing when it passes: a dream
// that errs, is held, loses a probe, breaks a guard, touches what is not
// memory, leaves the index past what the agent loads, or leaves a defect
// it was expected to fix. Doing nothing fails as surely as doing harm.
func (s Score) problems() []string {
	var out []string
	if s.Err != "" {
		out = append(out, "error: "+s.Err)
	}
	if s.Held != "" {
		out = append(out, "held for review: "+s.Held)
	}
	if s.ProbesRetained < s.ProbesTotal {
		out = append(out, fmt.Sprintf("%d probe fact(s) lost", s.ProbesTotal-s.ProbesRetained))
	}
	if s.Regressions > 0 {
		out = append(out, fmt.Sprintf("%d guard(s) broken", s.Regressions))
	}
	if !s.OutsideUntouched {
		out = append(out, "wrote outside the memory")
	}
	if !s.IndexWithinBudget {
		out = append(out, "the index is past what the agent loads")
	}
	for _, u := range s.Unfixed {
		out = append(out, "not fixed: "+u)
	}
	return out
}

// Run scores each scenario in its own scratch workspace. A scenario whose
// setup or dream fails is scored with Err set; Run itself fails only when
// ctx ends.
func Run(ctx context.Context, scenarios []Scenario, e Engine) ([]Score, error) {
	var scores []Score
	for _, s := range scenarios {
		if err := ctx.Err(); err != nil {
			return scores, fmt.Errorf("eval: %w", err)
		}
		sc := runOne(ctx, s, e)
		sc.Problems = sc.problems()
		scores = append(scores, sc)
	}
	return scores, nil
}

func runOne(ctx context.Context, s Scenario, e Engine) Score {
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
	dream := func(f DreamFunc) {
		out, err := f(ctx, s, ws)
		sc.Tokens += out.Usage.Total()
		if out.Held != "" && sc.Held == "" {
			sc.Held = out.Held
		}
		if err != nil && sc.Err == "" {
			sc.Err = err.Error()
		}
	}
	dream(e.Offline)
	// With a model, what the offline pass left is the model's to fix.
	mid := before
	if e.Model != nil {
		if mid, err = takeSnapshot(ws.MemoryDir); err != nil {
			sc.Err = fmt.Sprintf("after the offline pass: %v", err)
			return sc
		}
		dream(e.Model)
	}
	after, err := takeSnapshot(ws.MemoryDir)
	if err != nil {
		sc.Err = fmt.Sprintf("after: %v", err)
		return sc
	}
	if o, err := outsideHash(ws); err == nil {
		sc.OutsideUntouched = o == outside
	}
	sc.grade(s, before, mid, after, e.Model != nil)
	return sc
}

// grade scores the dream on the scenario: each expectation against the
// memory before it, after the offline pass (mid) and after it, each probe,
// and the index against its agent's budget. withModel scores what the
// offline pass left apart, as the model's.
func (sc *Score) grade(s Scenario, before, mid, after *snapshot, withModel bool) {
	for _, x := range s.Expects {
		wasOK, isOK := x.holds(before, before), x.holds(after, before)
		if x.Guard {
			sc.GuardsTotal++
			if !isOK {
				sc.Regressions++
				sc.Failed = append(sc.Failed, "guard "+x.String())
			}
			continue
		}
		if wasOK {
			sc.NotPlanted = append(sc.NotPlanted, x.String())
		}
		sc.DefectsTotal++
		if x.Mechanical {
			sc.MechanicalTotal++
		}
		if withModel && !x.holds(mid, before) {
			sc.ModelTotal++
			if isOK {
				sc.ModelFixed++
			}
		}
		if isOK {
			sc.DefectsFixed++
			if x.Mechanical {
				sc.MechanicalFixed++
			}
			continue
		}
		sc.Failed = append(sc.Failed, x.String())
		if x.Mechanical || withModel {
			sc.Unfixed = append(sc.Unfixed, x.String())
		}
	}
	for _, p := range s.Probes {
		if !probeHolds(after, p) {
			sc.Failed = append(sc.Failed, "probe "+p.String())
			continue
		}
		sc.ProbesRetained++
	}
	// As the scenario's agent counts its index (indexcount.Of); a
	// layout whose agent loads no index has none to keep within budget.
	lim, ok := indexcount.Of(s.Host)
	sc.IndexWithinBudget = after.dir.Index == nil || !ok || lim.Fits(lim.Count([]byte(after.files[memory.IndexFile])))
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
