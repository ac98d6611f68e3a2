package main

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/spend"
)

// statsView is `dream stats --json`: the telemetry's counts and the
// spend ledger's money.
type statsView struct {
	telemetry.Stats
	Spend spendStats `json:"spend"`
}

// spendStats is what model dreams spent in the window, from the ledger
// every process of the state dir writes: by day, model and host, and
// each dream's estimate against what it spent.
type spendStats struct {
	Total   spend.Amount `json:"total"`
	ByDay   []spendRow   `json:"by_day"`
	ByModel []spendRow   `json:"by_model"`
	ByHost  []spendRow   `json:"by_host"`
	Dreams  []dreamSpend `json:"dreams"`
	// Malformed counts ledger lines that could not be read.
	Malformed int `json:"malformed,omitempty"`
}

type spendRow struct {
	Key    string `json:"key"`
	Dreams int    `json:"dreams"`
	spend.Amount
}

type dreamSpend struct {
	ID        string       `json:"id"`
	StartedAt time.Time    `json:"started_at"`
	MemoryDir string       `json:"memory_dir"`
	Host      string       `json:"host"`
	Model     string       `json:"model"`
	Status    string       `json:"status"`
	Estimate  spend.Amount `json:"estimate"`
	Spent     spend.Amount `json:"spent"`
	// Ratio is spent over estimated dollars (tokens for a free model).
	Ratio float64 `json:"ratio"`
}

// spendStats reads the ledger since, kept to the memory dir the location
// flags name, if any.
func (a *app) spendStats(since time.Time) (spendStats, error) {
	var out spendStats
	scope, err := a.memoryScope()
	if err != nil {
		return out, err
	}
	ds, bad, err := spend.Open(a.loaded.Settings.StateDir).Dreams()
	if err != nil {
		return out, err
	}
	out.Malformed = bad
	rows := map[string]map[string]*spendRow{"day": {}, "model": {}, "host": {}}
	for _, d := range ds {
		r := d.Reserve
		if r.At.Before(since) || scope != "" && !inScope(scope, r.MemoryDir) {
			continue
		}
		host := r.Host
		if host == "" {
			host = "-"
		}
		status := d.Status
		if !d.Settled {
			status = "running or died"
		}
		one := dreamSpend{ID: r.ID, StartedAt: r.At, MemoryDir: r.MemoryDir, Host: host, Model: r.Model, Status: status, Spent: d.Spent}
		if r.Estimate != nil {
			one.Estimate = *r.Estimate
			switch {
			case one.Estimate.USD > 0:
				one.Ratio = d.Spent.USD / one.Estimate.USD
			case one.Estimate.Tokens > 0:
				one.Ratio = float64(d.Spent.Tokens) / float64(one.Estimate.Tokens)
			}
		}
		out.Dreams = append(out.Dreams, one)
		out.Total = out.Total.Add(d.Spent)
		for kind, key := range map[string]string{"day": r.At.Local().Format(time.DateOnly), "model": r.Model, "host": host} {
			row := rows[kind][key]
			if row == nil {
				row = &spendRow{Key: key}
				rows[kind][key] = row
			}
			row.Dreams++
			row.Amount = row.Amount.Add(d.Spent)
		}
	}
	sorted := func(m map[string]*spendRow) []spendRow {
		out := []spendRow{}
		for _, r := range m {
			out = append(out, *r)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
		return out
	}
	out.ByDay, out.ByModel, out.ByHost = sorted(rows["day"]), sorted(rows["model"]), sorted(rows["host"])
	if out.Dreams == nil {
		out.Dreams = []dreamSpend{}
	}
	return out, nil
}

// maxDreamsShown is how many of the latest dreams the text view lists.
const maxDreamsShown = 20

func printSpendStats(w io.Writer, s spendStats) {
	if len(s.Dreams) == 0 {
		fmt.Fprintln(w, "spend: no model dream in the window")
		return
	}
	fmt.Fprintf(w, "spend: %s over %d model dream(s)\n", s.Total, len(s.Dreams))
	for _, g := range []struct {
		title string
		rows  []spendRow
	}{{"by day", s.ByDay}, {"by model", s.ByModel}, {"by host", s.ByHost}} {
		fmt.Fprintf(w, "  %s:\n", g.title)
		for _, r := range g.rows {
			fmt.Fprintf(w, "    %-28s %3d dream(s)  %s\n", r.Key, r.Dreams, r.Amount)
		}
	}
	fmt.Fprintln(w, "  estimate against spent, latest dreams:")
	start := max(0, len(s.Dreams)-maxDreamsShown)
	for _, d := range s.Dreams[start:] {
		fmt.Fprintf(w, "    %s  %-8s %-18s %-10s estimate %-22s spent %-22s x%.2f\n", d.ID, d.Host, d.Model, d.Status, d.Estimate, d.Spent, d.Ratio)
	}
	if s.Malformed > 0 {
		fmt.Fprintf(w, "  %d ledger line(s) could not be read\n", s.Malformed)
	}
}
