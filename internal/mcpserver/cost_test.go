package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// estimating is a model runner as dream_status sees one: it estimates a
// dream (and would spend) but is never run here.
type estimating struct{}

func (estimating) Run(context.Context, dream.Job) (dream.Outcome, error) {
	return dream.Outcome{}, nil
}

func (estimating) Estimate(context.Context, dream.Job) (spend.Estimate, error) {
	return spend.Estimate{Provider: "anthropic", Model: "claude-sonnet-4-6", Requests: 4, Parts: 1,
		Usage: llm.Usage{InputTokens: 20_000, OutputTokens: 2_000, CacheReadInputTokens: 30_000}}, nil
}

// TestStatusSaysCostAndProvider: dream_status says who dreams and why,
// what a dream would cost now, and, under a day's ceiling below that,
// that it would not start, as `dream status` does.
func TestStatusSaysCostAndProvider(t *testing.T) {
	for _, tc := range []struct {
		name    string
		day     float64
		refusal string
	}{
		{"fits", 0, ""},
		{"over the day's ceiling", 0.01, "max_cost_per_day"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, func(o *Options) {
				o.Base.Runner, o.Provider = estimating{}, "anthropic (claude-sonnet-4-6): provider set in config.toml"
				if tc.day > 0 {
					o.Base.Settings.MaxCostPerDay = tc.day
				}
			})
			var st StatusOutput
			txt := call(t, f.cs, "dream_status", nil, &st, false)
			if st.Provider != "anthropic (claude-sonnet-4-6): provider set in config.toml" {
				t.Errorf("provider %q", st.Provider)
			}
			if st.Cost == nil || st.Cost.Estimate == nil || st.Cost.Estimate.Amount.USD <= 0 || st.Cost.Estimate.Model != "claude-sonnet-4-6" {
				t.Fatalf("cost %+v: want a priced estimate", st.Cost)
			}
			if !strings.Contains(txt, "a dream would cost about ") || !strings.Contains(txt, "claude-sonnet-4-6") {
				t.Errorf("the text does not give the cost: %s", txt)
			}
			if tc.refusal == "" && st.Cost.Refusal != "" || !strings.Contains(st.Cost.Refusal, tc.refusal) || !strings.Contains(txt, tc.refusal) {
				t.Errorf("refusal %q (text %s), want %q", st.Cost.Refusal, txt, tc.refusal)
			}
		})
	}
}
