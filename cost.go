package dream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// Estimator is a Runner that can say before it runs what a dream will
// cost. Every dream whose runner is one passes the spending ceilings
// (Settings' max_cost_per_dream, max_cost_per_day, max_cost_per_month,
// max_tokens, max_tokens_per_day, max_tokens_per_month) before it starts:
// its estimate is priced, checked and reserved in the state dir's ledger,
// which every process shares, and settled with what it spent when it
// ends. A Runner that is not one (the offline engine, a host's own job)
// spends nothing dream can count, nor does an Estimate of no Requests (a
// job's runner without a model).
type Estimator interface {
	// Estimate reads job's memory (its MemoryDir, never written) and
	// returns the expected usage and Model, unpriced.
	Estimate(ctx context.Context, job Job) (spend.Estimate, error)
}

// GateBudget is MaybeResult.Gate when every gate opened but the dream's
// estimate did not fit under a spending ceiling: like a closed gate, not
// a failure.
const GateBudget = "budget"

// StatusNotStarted is Report.Status of a dream refused by a spending
// ceiling before it sent anything.
const StatusNotStarted = "not_started"

// ParkIncomplete prefixes the park reason of a dream that stopped before
// it finished (a spending ceiling, a part out of context): what it did is
// staged for review, never landed by itself.
const ParkIncomplete = "stopped before it finished: "

// CostOutlook is what a dream would cost now and what the ceilings leave,
// for `dream status`.
type CostOutlook struct {
	// Estimate is nil when the runner spends nothing (not an Estimator).
	Estimate *spend.Estimate `json:"estimate,omitempty"`
	// Today and ThisMonth are what dreams spent (and running ones
	// reserved) from this state dir.
	Today     spend.Amount `json:"today"`
	ThisMonth spend.Amount `json:"this_month"`
	// Refusal says why a dream would not start now ("" when it would).
	Refusal string `json:"refusal,omitempty"`
}

// Estimate says what a dream on the memory as it is now would cost and
// whether the ceilings would let it start. It reads the memory and the
// ledger and changes nothing.
func (d *Dreamer) Estimate(ctx context.Context) (CostOutlook, error) {
	var o CostOutlook
	led := spend.Open(d.cfg.sharedState)
	t, err := led.Totals()
	if err != nil {
		return o, err
	}
	o.Today, o.ThisMonth = t.Day, t.Month
	last, err := d.lock.LastConsolidatedAt()
	if err != nil {
		return o, err
	}
	sessions, _ := d.countSessions(ctx, last)
	e, req, err := d.estimate(ctx, "", sessions)
	if err != nil || e == nil {
		if errors.Is(err, ErrOverBudget) {
			o.Refusal, err = err.Error(), nil
		}
		return o, err
	}
	o.Estimate = e
	if _, err := led.Check(req); errors.Is(err, ErrOverBudget) {
		o.Refusal = err.Error()
	} else if err != nil {
		return o, err
	}
	return o, nil
}

// estimate asks an Estimator runner what a dream would cost and prices
// it; nil for a runner that is not one. The request is the ledger's for
// a dream id with the Settings' ceilings.
func (d *Dreamer) estimate(ctx context.Context, id string, sessions int) (*spend.Estimate, spend.Request, error) {
	est, ok := d.cfg.Runner.(Estimator)
	if !ok {
		return nil, spend.Request{}, nil
	}
	s, spec := d.cfg.Settings, d.cfg.Job
	e, err := est.Estimate(ctx, Job{TaskID: id, MemoryDir: d.cfg.MemoryDir, MemoryDisplayDir: d.cfg.MemoryDir,
		RepoDir: readable(spec, jobs.ReadRepo, d.cfg.RepoDir), SessionsDir: readable(spec, jobs.ReadTranscripts, d.cfg.SessionsDir),
		SessionsReviewed: sessions, Pinned: s.Pinned, Progress: func(Progress) {},
		Spec: spec, Budgets: Budgets{MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, Timeout: s.Timeout}})
	if err != nil {
		return nil, spend.Request{}, fmt.Errorf("estimating the dream: %w", err)
	}
	if e.Requests == 0 {
		return nil, spend.Request{}, nil
	}
	if e.Provider == "" {
		e.Provider = d.cfg.Provider
	}
	p, from, ok := spend.Lookup(e.Model, d.cfg.Settings.Prices)
	if !ok {
		return &e, spend.Request{}, &spend.UnpricedError{Model: e.Model}
	}
	e.Priced(p, from)
	return &e, spend.Request{
		ID: id, MemoryDir: d.cfg.MemoryDir, Host: d.cfg.Host, Provider: e.Provider, Model: e.Model,
		Estimate: e.Amount, Price: p,
		Limits: spend.Limits{
			Dream: spend.Amount{Tokens: s.MaxTokens, USD: s.MaxCostPerDream},
			Day:   spend.Amount{Tokens: s.MaxTokensPerDay, USD: s.MaxCostPerDay},
			Month: spend.Amount{Tokens: s.MaxTokensPerMonth, USD: s.MaxCostPerMonth},
		},
		// A dream that neither settles nor dies (a hung process) holds
		// its reservation for its timeout and a margin.
		Hold: s.Timeout + 5*time.Minute,
	}, nil
}

// reserve estimates a model dream and reserves its estimate in the
// ledger before anything is sent; a dream refused by a ceiling (or with
// an unpriced model) ends here, with the telemetry's refused event.
func (r *dreamRun) reserve() error {
	d := r.d
	e, req, err := d.estimate(r.ctx, r.rep.TaskID, r.o.sessions)
	r.rep.Estimate = e
	if err == nil && e != nil {
		r.reservation, err = spend.Open(d.cfg.sharedState).Reserve(req)
	}
	if errors.Is(err, ErrOverBudget) {
		r.notStarted = true
		if terr := telemetry.Open(d.cfg.sharedState).Refused(r.rep.TaskID, d.cfg.MemoryDir, err.Error(), r.who()); terr != nil {
			d.cfg.Logf("dream: telemetry: %v", terr)
		}
	}
	return err
}

// who is the telemetry's account of the dream's provider and estimate.
func (r *dreamRun) who() telemetry.Who {
	d := r.d
	w := telemetry.Who{Provider: d.cfg.Provider, Model: d.cfg.Model, Why: d.cfg.ProviderWhy}
	if e := r.rep.Estimate; e != nil {
		a := e.Amount
		w.Estimate, w.Model = &a, e.Model
	}
	return w
}

// budget is the Job's Budget: the reservation's check before each
// request; nil for a dream with no reservation.
func (r *dreamRun) budget() func(used, next llm.Usage) (int, error) {
	if r.reservation == nil {
		return nil
	}
	return r.reservation.Next
}

// settle records what the dream spent and releases its reservation.
func (r *dreamRun) settle() {
	if r.reservation == nil {
		return
	}
	cost, err := r.reservation.Settle(r.rep.Usage, r.rep.Status)
	if err != nil {
		r.d.cfg.Logf("dream: %v", err)
	}
	r.reservation, r.rep.Cost = nil, &cost
}
