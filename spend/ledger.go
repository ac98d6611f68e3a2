package spend

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/proc"
	"github.com/dreamkit/dream/llm"
)

// FileName is the ledger inside the state dir, and lockName the file its
// writers flock.
const (
	FileName = "spend.jsonl"
	lockName = "spend.lock"
)

// Record kinds.
const (
	KindReserve = "reserve" // a dream is about to start: its reservation
	KindSpent   = "spent"   // what a running dream has spent so far
	KindSettle  = "settle"  // a dream ended: what it spent
)

// Record is one line of the ledger.
type Record struct {
	Kind string    `json:"kind"`
	ID   string    `json:"id"`
	At   time.Time `json:"at"`

	// Reserve records say who reserves what, until when.
	PID       int        `json:"pid,omitempty"`
	Machine   string     `json:"machine,omitempty"`
	Expires   *time.Time `json:"expires,omitempty"`
	MemoryDir string     `json:"memory_dir,omitempty"`
	Host      string     `json:"host,omitempty"`
	Provider  string     `json:"provider,omitempty"`
	Model     string     `json:"model,omitempty"`
	Estimate  *Amount    `json:"estimate,omitempty"`
	Reserved  *Amount    `json:"reserved,omitempty"`

	// Spent and settle records say what was spent.
	Spent  *Amount    `json:"spent,omitempty"`
	Usage  *llm.Usage `json:"usage,omitempty"`
	Status string     `json:"status,omitempty"`
}

// Limits are the ceilings a dream is held to; a zero field is no ceiling.
type Limits struct {
	// Dream is max_tokens and max_cost_per_dream.
	Dream Amount
	// Day and Month are max_tokens_per_day, max_cost_per_day,
	// max_tokens_per_month and max_cost_per_month.
	Day, Month Amount
}

// Request is a dream asking for its reservation.
type Request struct {
	ID, MemoryDir, Host, Provider, Model string
	Estimate                             Amount
	// Price is what the dream's model charges, for its checks while it
	// runs (Hold.Next).
	Price  Price
	Limits Limits
	// Hold is how long the reservation stands if its process neither
	// settles it nor dies: the dream's timeout and a margin.
	Hold time.Duration
}

// Ledger is the spend of one state dir: an append-only file of JSON
// lines that any number of processes share. A reservation is decided and
// written under an exclusive flock, after reading every line, so no two
// dreams can both take what is left; the other records are appended under
// the same lock.
type Ledger struct {
	path, lock string
	now        func() time.Time
	alive      func(pid int) bool
	machine    string
}

// Open returns the ledger of stateDir; nothing is touched until it is
// used.
func Open(stateDir string) *Ledger {
	machine, _ := os.Hostname()
	return &Ledger{
		path: filepath.Join(stateDir, FileName), lock: filepath.Join(stateDir, lockName),
		now: time.Now, alive: proc.Alive, machine: machine,
	}
}

// Path is the ledger file.
func (l *Ledger) Path() string { return l.path }

// OverBudgetError is a dream refused, or stopped, by a ceiling.
type OverBudgetError struct {
	// Ceiling is the setting that binds: max_cost_per_day, max_tokens,
	// ...
	Ceiling string
	// Limit is the ceiling's value (for a running dream, what it left the
	// dream when it started); Used what was spent or reserved against it
	// (by this dream, for a running one); Need what the dream needed on
	// top (its estimate, or its next request).
	Limit, Used, Need float64
	// Tokens says the amounts are tokens, not dollars.
	Tokens bool
	// Running says the dream had started: it stopped before the request
	// that would have crossed the ceiling.
	Running bool
}

// ErrOverBudget matches every *OverBudgetError and *UnpricedError.
var ErrOverBudget = errors.New("spend: over budget")

func (e *OverBudgetError) Error() string {
	f := Dollars
	if e.Tokens {
		f = func(v float64) string { return Count(int64(v)) + " tokens" }
	}
	if e.Running {
		// A running dream's limit is what the ceiling left it when it
		// started, not the setting (the day may have been half spent).
		return fmt.Sprintf("stopped at its ceiling before the next request: %s left this dream %s when it started, it spent %s, and the next request could need %s",
			e.Ceiling, f(e.Limit), f(e.Used), f(e.Need))
	}
	return fmt.Sprintf("not started: its estimate, %s, exceeds what is left of %s (%s, of which %s is spent or reserved)",
		f(e.Need), e.Ceiling, f(e.Limit), f(e.Used))
}

// Is makes errors.Is(err, ErrOverBudget) true.
func (e *OverBudgetError) Is(target error) bool { return target == ErrOverBudget }

// Totals are what the current day and month have spent, counting what
// running dreams reserved.
type Totals struct {
	Day, Month Amount
}

// Reserve reserves what the dream may spend, the least that a ceiling
// leaves (the dream's own, or what is left of the day's or month's), or
// refuses it with an *OverBudgetError when the estimate does not fit
// under one. Every other process counts the reservation as spent until
// the dream settles, so the ceilings hold across processes; a dream that
// spends far less than its ceiling holds the rest only while it runs.
func (l *Ledger) Reserve(r Request) (*Hold, error) {
	var h *Hold
	err := l.locked(func(recs []Record) ([]Record, error) {
		now := l.now()
		t := totals(recs, now, l.live)
		allow, binding, err := decide(r, t)
		if err != nil {
			return nil, err
		}
		hold := r.Hold
		if hold <= 0 {
			hold = time.Hour
		}
		exp := now.Add(hold)
		est := r.Estimate
		rec := Record{Kind: KindReserve, ID: r.ID, At: now, PID: os.Getpid(), Machine: l.machine, Expires: &exp,
			MemoryDir: r.MemoryDir, Host: r.Host, Provider: r.Provider, Model: r.Model, Estimate: &est, Reserved: &allow}
		h = &Hold{l: l, id: r.ID, price: r.Price, allow: allow, binding: binding, Totals: t}
		return []Record{rec}, nil
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Check says whether Reserve would grant r now, without reserving
// anything, and what the day and month have spent and reserved.
func (l *Ledger) Check(r Request) (Totals, error) {
	t, err := l.Totals()
	if err != nil {
		return t, err
	}
	_, _, err = decide(r, t)
	return t, err
}

// decide is Reserve's rule: the estimate must fit under each ceiling
// (what the day and month have left after t); the allowance is the least
// of what each leaves. binding names the ceiling each of its two amounts
// comes from.
func decide(r Request, t Totals) (allow Amount, binding [2]string, err error) {
	allow = Amount{Tokens: math.MaxInt64, USD: math.Inf(1)}
	est := r.Estimate
	for _, c := range []struct {
		name        string
		limit, used float64
		tokens      bool
	}{
		{"max_tokens", float64(r.Limits.Dream.Tokens), 0, true},
		{"max_cost_per_dream", r.Limits.Dream.USD, 0, false},
		{"max_tokens_per_day", float64(r.Limits.Day.Tokens), float64(t.Day.Tokens), true},
		{"max_cost_per_day", r.Limits.Day.USD, t.Day.USD, false},
		{"max_tokens_per_month", float64(r.Limits.Month.Tokens), float64(t.Month.Tokens), true},
		{"max_cost_per_month", r.Limits.Month.USD, t.Month.USD, false},
	} {
		if c.limit <= 0 {
			continue
		}
		need, left := est.USD, c.limit-c.used
		if c.tokens {
			need = float64(est.Tokens)
		}
		if need > left {
			return Amount{}, binding, &OverBudgetError{Ceiling: c.name, Limit: c.limit, Used: c.used, Need: need, Tokens: c.tokens}
		}
		if c.tokens && int64(left) < allow.Tokens {
			allow.Tokens, binding[0] = int64(left), c.name
		}
		if !c.tokens && left < allow.USD {
			allow.USD, binding[1] = left, c.name
		}
	}
	// No ceiling at all (a host that set none): a number JSON can hold.
	allow.USD = min(allow.USD, math.MaxFloat64)
	return allow, binding, nil
}

// Totals reads what the current day and month have spent and reserved.
func (l *Ledger) Totals() (Totals, error) {
	recs, err := l.read()
	if err != nil {
		return Totals{}, err
	}
	return totals(recs, l.now(), l.live), nil
}

// Hold is a dream's reservation in the ledger.
type Hold struct {
	l       *Ledger
	id      string
	price   Price
	allow   Amount
	binding [2]string
	written Amount
	// Totals are the day's and month's spend when it was reserved, other
	// dreams' reservations included.
	Totals Totals
}

// Allowance is the most the dream may spend.
func (h *Hold) Allowance() Amount { return h.allow }

// minOutput is the smallest output worth a request: an edit, or the
// summary. A request that could not afford it is not sent.
const minOutput = 256

// Next is asked before each request with what the dream has used so far
// and the next request's input: an upper bound, of which what the
// provider will read from its cache (the previous request, re-sent) is in
// CacheReadInputTokens and the rest in InputTokens, priced at the highest
// input rate (a cache write where writes cost more). It records the spend
// so far and, when the request may go, its input (a dream that dies, even
// waiting for that answer, keeps it counted) in the ledger, and returns
// the most output tokens the request may ask for without crossing the
// reservation, or an *OverBudgetError when not even minOutput fits. Only
// a cache miss on the re-sent part can make the request cost more than
// checked (by that part at the write rate, once; the next check sees it).
func (h *Hold) Next(used, next llm.Usage) (int, error) {
	nextInput := next.InputTokens + next.CacheReadInputTokens + next.CacheCreationInputTokens
	inCost := float64(next.CacheReadInputTokens)*h.price.CacheRead/1e6 + float64(next.InputTokens+next.CacheCreationInputTokens)*h.price.MaxInput()/1e6
	spent := AmountOf(used, h.price)
	leftTok := h.allow.Tokens - spent.Tokens - nextInput
	if leftTok < minOutput {
		h.record(spent)
		return 0, &OverBudgetError{Ceiling: or(h.binding[0], "the token reservation"), Limit: float64(h.allow.Tokens), Used: float64(spent.Tokens),
			Need: float64(nextInput + minOutput), Tokens: true, Running: true}
	}
	leftUSD := h.allow.USD - spent.USD - inCost
	out := leftTok
	if h.price.Output > 0 {
		if leftUSD < minOutput*h.price.Output/1e6 {
			h.record(spent)
			return 0, &OverBudgetError{Ceiling: or(h.binding[1], "the reservation"), Limit: h.allow.USD, Used: spent.USD,
				Need: inCost + minOutput*h.price.Output/1e6, Running: true}
		}
		out = min(out, int64(leftUSD/(h.price.Output/1e6)))
	}
	// The request is paid for once it is sent, answered or not: a dream
	// whose process dies waiting for the answer keeps its input counted.
	h.record(Amount{Tokens: spent.Tokens + nextInput, USD: spent.USD + inCost})
	return int(min(out, math.MaxInt32)), nil
}

// record writes a as what the dream has spent so far, when it changed.
func (h *Hold) record(a Amount) {
	if a == h.written {
		return
	}
	if err := h.l.append(Record{Kind: KindSpent, ID: h.id, At: h.l.now(), Spent: &a}); err == nil {
		h.written = a
	}
}

// Settle records what the dream spent in the end; its reservation is
// released.
func (h *Hold) Settle(used llm.Usage, status string) (Amount, error) {
	spent := AmountOf(used, h.price)
	u := used
	return spent, h.l.append(Record{Kind: KindSettle, ID: h.id, At: h.l.now(), Spent: &spent, Usage: &u, Status: status})
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// Dream is one dream as the ledger saw it.
type Dream struct {
	Reserve Record
	// Spent is the settled spend, or the last spend recorded while it ran.
	Spent   Amount
	Usage   *llm.Usage
	Status  string
	Settled bool
}

// Dreams reads every dream of the ledger, oldest first, and the number of
// lines it could not read.
func (l *Ledger) Dreams() ([]Dream, int, error) {
	recs, bad, err := l.readCounting()
	if err != nil {
		return nil, 0, err
	}
	return dreams(recs), bad, nil
}

func dreams(recs []Record) []Dream {
	by := map[string]*Dream{}
	var order []string
	for _, r := range recs {
		d := by[r.ID]
		if r.Kind == KindReserve {
			if d == nil {
				d = &Dream{}
				by[r.ID] = d
				order = append(order, r.ID)
			}
			d.Reserve = r
			continue
		}
		if d == nil || r.Spent == nil {
			continue
		}
		if r.Kind == KindSettle {
			d.Settled, d.Spent, d.Usage, d.Status = true, *r.Spent, r.Usage, r.Status
		} else if !d.Settled {
			d.Spent = *r.Spent
		}
	}
	out := make([]Dream, 0, len(order))
	for _, id := range order {
		out = append(out, *by[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Reserve.At.Before(out[j].Reserve.At) })
	return out
}

// live says a reservation still stands: its process is alive (on this
// machine; on another one only its expiry says) and it has not expired.
// A dead or expired dream is charged what it recorded as spent.
func (l *Ledger) live(r Record, now time.Time) bool {
	if r.Expires == nil || !now.Before(*r.Expires) {
		return false
	}
	return r.Machine != l.machine || l.alive(r.PID)
}

// totals charges each dream started in the current day and month: a
// settled one what it spent, a running one the larger of its reservation
// and what it spent so far, a dead or expired one what it had spent.
func totals(recs []Record, now time.Time, live func(Record, time.Time) bool) Totals {
	dayStart := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location())
	var t Totals
	for _, d := range dreams(recs) {
		at := d.Reserve.At.In(now.Location())
		if at.Before(monthStart) {
			continue
		}
		charge := d.Spent
		if !d.Settled && d.Reserve.Reserved != nil && live(d.Reserve, now) {
			r := *d.Reserve.Reserved
			charge = Amount{Tokens: max(r.Tokens, charge.Tokens), USD: max(r.USD, charge.USD)}
		}
		t.Month = t.Month.Add(charge)
		if !at.Before(dayStart) {
			t.Day = t.Day.Add(charge)
		}
	}
	return t
}

// locked runs f on every record under the ledger's flock and appends
// what it returns.
func (l *Ledger) locked(f func([]Record) ([]Record, error)) error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("spend ledger: %w", err)
	}
	_, unlock, err := fsutil.LockFile(l.lock)
	if err != nil {
		return fmt.Errorf("spend ledger: %w", err)
	}
	defer unlock()
	recs, _, err := l.readCounting()
	if err != nil {
		return err
	}
	add, err := f(recs)
	if err != nil {
		return err
	}
	return l.write(add...)
}

// append writes recs under the ledger's flock.
func (l *Ledger) append(recs ...Record) error {
	return l.locked(func([]Record) ([]Record, error) { return recs, nil })
}

// write appends recs in one write on an O_APPEND descriptor.
func (l *Ledger) write(recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, r := range recs {
		r.At = r.At.Round(0).UTC()
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("spend ledger: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("spend ledger: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("spend ledger: %w", err)
	}
	return f.Close()
}

func (l *Ledger) read() ([]Record, error) {
	recs, _, err := l.readCounting()
	return recs, err
}

// maxLine bounds one ledger line; a longer one is not dream's.
const maxLine = 64 << 10

// readCounting reads every record and counts the lines it could not
// decode (a torn write cannot happen under the lock, a hand edit can).
func (l *Ledger) readCounting() ([]Record, int, error) {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("spend ledger: %w", err)
	}
	defer f.Close()
	var recs []Record
	bad := 0
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			bad++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 && len(line) <= maxLine {
			var rec Record
			if json.Unmarshal(line, &rec) == nil && rec.ID != "" {
				recs = append(recs, rec)
			} else {
				bad++
			}
		}
		if errors.Is(err, io.EOF) {
			return recs, bad, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("spend ledger: %w", err)
		}
	}
}
