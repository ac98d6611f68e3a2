package spend

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

func TestLookup(t *testing.T) {
	user := map[string]Price{"claude-sonnet-4-6": {Input: 1, Output: 2}, "llama3": {}}
	for _, tc := range []struct {
		model string
		want  Price
		ok    bool
		from  string
	}{
		{"claude-sonnet-4-6", Price{Input: 1, Output: 2}, true, "your price"},
		{"claude-sonnet-4-5-20250929", DefaultPrices["claude-sonnet-4-5"], true, "list price of claude-sonnet-4-5"},
		{"gpt-4o-2024-08-06", DefaultPrices["gpt-4o"], true, "list price"},
		{"gpt-4.1-mini", DefaultPrices["gpt-4.1-mini"], true, "list price of gpt-4.1-mini"},
		{"llama3", Price{}, true, "your price"},
		{"fake-model", Price{}, false, ""},
		{"gpt-4.1-mini-2025", Price{}, false, ""}, // not a date: not the alias
	} {
		p, from, ok := Lookup(tc.model, user)
		if ok != tc.ok || p != tc.want || !strings.Contains(from, tc.from) {
			t.Errorf("Lookup(%q) = %+v, %q, %v; want %+v, %q, %v", tc.model, p, from, ok, tc.want, tc.from, tc.ok)
		}
	}
	// It asks for the provider's prices and suggests no figures: pasted,
	// a suggested $3/$15 priced a $15/$75 model five times too low.
	err := error(&UnpricedError{Model: "fake-model"})
	if msg := err.Error(); !errors.Is(err, ErrOverBudget) || !strings.Contains(msg, `[prices."fake-model"]`) || !strings.Contains(msg, "list prices") ||
		regexp.MustCompile(`(input|output) = [0-9]`).MatchString(msg) {
		t.Errorf("UnpricedError = %v", err)
	}
}

func TestPriceUSD(t *testing.T) {
	p := DefaultPrices["claude-sonnet-4-6"]
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadInputTokens: 1_000_000, CacheCreationInputTokens: 1_000_000}
	if got, want := USD(p, u), 3+15+0.3+3.75; math.Abs(got-want) > 1e-9 {
		t.Errorf("USD = %v, want %v", got, want)
	}
}

// TestSimulate: each request re-sends the previous one (read from the
// cache) and adds the last answer and its results (written to it).
func TestSimulate(t *testing.T) {
	turns := []Turn{{Output: 10, Results: 100}, {Output: 20, Results: 200}}
	u, n, largest := Simulate(1000, 0, turns, 5, true)
	// Requests: 1000; 1110 (1000 read, 110 written); 1330 (1110 read, 220 written).
	want := llm.Usage{OutputTokens: 35, CacheReadInputTokens: 2110, CacheCreationInputTokens: 1000 + 110 + 220}
	if u != want || n != 3 || largest != 1330 {
		t.Errorf("Simulate = %+v, %d, %d; want %+v, 3, 1330", u, n, largest, want)
	}
	u, _, _ = Simulate(1000, 400, nil, 5, false)
	if want := (llm.Usage{InputTokens: 600, CacheReadInputTokens: 400, OutputTokens: 5}); u != want {
		t.Errorf("Simulate with a shared prefix = %+v, want %+v", u, want)
	}
}

func testLedger(t *testing.T, now *time.Time) *Ledger {
	t.Helper()
	l := Open(t.TempDir())
	l.now = func() time.Time { return *now }
	return l
}

var testPrice = Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

func TestReserveRefusesWhatDoesNotFit(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.Local)
	l := testLedger(t, &now)
	lim := Limits{Dream: Amount{Tokens: 400_000, USD: 1}, Day: Amount{USD: 2}, Month: Amount{USD: 3}}
	h, err := l.Reserve(Request{ID: "a", Estimate: Amount{Tokens: 10_000, USD: 0.5}, Price: testPrice, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	// The dream's own ceilings bind: the day and month leave more.
	if got := h.Allowance(); got.USD != 1 || got.Tokens != 400_000 {
		t.Errorf("allowance = %+v, want $1 (max_cost_per_dream) and 400k tokens (max_tokens)", got)
	}
	// While a runs, its reservation counts: $1 of the day's $2 is taken.
	_, err = l.Reserve(Request{ID: "b", Estimate: Amount{Tokens: 10_000, USD: 1.2}, Price: testPrice, Limits: lim})
	var ob *OverBudgetError
	if !errors.As(err, &ob) || ob.Ceiling != "max_cost_per_dream" {
		t.Fatalf("an estimate over max_cost_per_dream: %v", err)
	}
	lim.Dream.USD = 5
	_, err = l.Reserve(Request{ID: "b", Estimate: Amount{Tokens: 10_000, USD: 1.2}, Price: testPrice, Limits: lim})
	if !errors.As(err, &ob) || ob.Ceiling != "max_cost_per_day" || ob.Used != 1 || ob.Running {
		t.Fatalf("an estimate over what is left of the day: %v", err)
	}
	if !strings.Contains(err.Error(), "not started") {
		t.Errorf("message %q does not say the dream did not start", err)
	}
	// a settles at $0.20: the day has $1.80 left.
	if _, err := h.Settle(llm.Usage{OutputTokens: 13_333}, "completed"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(Request{ID: "b", Estimate: Amount{Tokens: 10_000, USD: 1.2}, Price: testPrice, Limits: lim}); err != nil {
		t.Fatalf("after a settled: %v", err)
	}
	// b reserved what the day left, $1.80: the month holds $2.
	tot, err := l.Totals()
	if err != nil || math.Abs(tot.Month.USD-2) > 1e-4 {
		t.Fatalf("totals = %+v, %v; want $2 in the month", tot, err)
	}
	// Tomorrow the day is new, the month is not, and b's reservation,
	// never settled, has expired: only a's $0.20 is left in it.
	now = now.Add(24 * time.Hour)
	if tot, err = l.Totals(); err != nil {
		t.Fatal(err)
	}
	if tot.Day.USD != 0 || math.Abs(tot.Month.USD-0.2) > 1e-4 {
		t.Errorf("totals the next day = %+v, want the day empty and $0.20 in the month", tot)
	}
}

func TestNextCapsOutputAndStops(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.Local)
	l := testLedger(t, &now)
	h, err := l.Reserve(Request{ID: "a", Estimate: Amount{Tokens: 100_000, USD: 0.1}, Price: testPrice,
		Limits: Limits{Dream: Amount{USD: 0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	// $0.10 allowed; 10k input tokens cost at most $0.0375: $0.0625 left
	// buys 4166 output tokens.
	out, err := h.Next(llm.Usage{}, llm.Usage{InputTokens: 10_000})
	if err != nil || out != 4166 {
		t.Fatalf("Next = %d, %v; want 4166", out, err)
	}
	used := llm.Usage{CacheCreationInputTokens: 10_000, OutputTokens: 4166}
	_, err = h.Next(used, llm.Usage{InputTokens: 20_000})
	var ob *OverBudgetError
	if !errors.As(err, &ob) || !ob.Running || ob.Ceiling != "max_cost_per_dream" {
		t.Fatalf("Next past the ceiling = %v", err)
	}
	// It names what the ceiling left the dream, not that as the setting.
	if !strings.Contains(err.Error(), "stopped at its ceiling") || !strings.Contains(err.Error(), "max_cost_per_dream left this dream $0.10 when it started") {
		t.Errorf("message %q", err)
	}
	// What it spent so far is in the ledger: a crash keeps it counted.
	ds, _, err := l.Dreams()
	if err != nil || len(ds) != 1 || ds[0].Settled || ds[0].Spent.Tokens != used.Total() {
		t.Fatalf("dreams = %+v, %v", ds, err)
	}
}

// TestDeadReservationExpires: a process that died holding a reservation
// is charged what it had recorded as spent, and the request it had sent
// (its answer may never have come: it was paid for all the same), not what
// it reserved.
func TestDeadReservationExpires(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.Local)
	l := testLedger(t, &now)
	lim := Limits{Day: Amount{USD: 1}}
	h, err := l.Reserve(Request{ID: "dead", Estimate: Amount{Tokens: 50_000, USD: 0.3}, Price: testPrice, Limits: lim, Hold: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// $0.15 spent, and a request of 1,000 input tokens sent: $0.00375 at
	// the highest input rate, paid for even if no answer comes.
	if _, err := h.Next(llm.Usage{OutputTokens: 10_000}, llm.Usage{InputTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	const paid = 0.15 + 0.00375
	tot, _ := l.Totals()
	if tot.Day.USD != 1 {
		t.Fatalf("while it lives: day = %v, want its reservation, what the day left: $1", tot.Day.USD)
	}
	l.alive = func(int) bool { return false }
	tot, _ = l.Totals()
	if math.Abs(tot.Day.USD-paid) > 1e-9 {
		t.Errorf("once its process is dead: day = %v, want what it spent and the request it sent, $%v", tot.Day.USD, paid)
	}
	l.alive = func(int) bool { return true }
	now = now.Add(2 * time.Hour)
	tot, _ = l.Totals()
	if math.Abs(tot.Day.USD-paid) > 1e-9 {
		t.Errorf("once it expired: day = %v, want $%v", tot.Day.USD, paid)
	}
}

func TestLedgerSkipsBadLines(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.Local)
	l := testLedger(t, &now)
	if _, err := l.Reserve(Request{ID: "a", Estimate: Amount{Tokens: 1000, USD: 0.1}, Price: testPrice}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json\n" + strings.Repeat("x", 100<<10) + "\n")
	f.Close()
	ds, bad, err := l.Dreams()
	if err != nil || len(ds) != 1 || bad != 2 {
		t.Errorf("Dreams = %d dreams, %d bad, %v; want 1, 2", len(ds), bad, err)
	}
	if filepath.Base(l.Path()) != FileName {
		t.Errorf("path %s", l.Path())
	}
}
