package spend

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

// helperEnv makes the test binary a ledger client (helperMain) instead of
// running tests: the state dir, the client's number and its seed.
const helperEnv = "DREAM_SPEND_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helperMain(dir))
	}
	os.Exit(m.Run())
}

// dayCeiling is max_cost_per_day of the multi-process test.
const dayCeiling = 2.0

// helperMain dreams against the ledger as the agent loop does: reserve an
// estimate, then before each request ask Next how much output it may ask
// for, spend no more than that (a provider honours max_tokens), and
// settle. One client in three dies in the middle of a dream, without
// settling, as a SIGKILLed dream would. Dreams spend between half and
// five times their estimate, so that some run into their reservation.
func helperMain(dir string) int {
	n, _ := strconv.Atoi(os.Getenv(helperEnv + "_N"))
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	l := Open(dir)
	lim := Limits{Dream: Amount{Tokens: 2_000_000, USD: 0.5}, Day: Amount{USD: dayCeiling}}
	started, refused := 0, 0
	for i := 0; i < 25; i++ {
		est := 0.05 + rng.Float64()*0.2
		h, err := l.Reserve(Request{ID: fmt.Sprintf("p%d-%d", n, i), Estimate: Amount{Tokens: 50_000, USD: est}, Price: testPrice, Limits: lim, Hold: time.Minute})
		if errors.Is(err, ErrOverBudget) {
			refused++
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // another dream may settle meanwhile
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		started++
		want := est * (0.5 + rng.Float64()*4.5)
		var used llm.Usage
		for USD(testPrice, used) < want {
			in := int64(2000 + rng.IntN(8000))
			out, err := h.Next(used, llm.Usage{InputTokens: in})
			if err != nil {
				break
			}
			if n == 2 && started == 1 {
				os.Exit(0) // dies between its check and its request: nothing more was spent
			}
			time.Sleep(time.Millisecond) // the request: other clients reserve and settle meanwhile
			used.CacheCreationInputTokens += in
			used.OutputTokens += int64(min(out, 200+rng.IntN(2000)))
		}
		if _, err := h.Settle(used, "completed"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("started %d refused %d\n", started, refused)
	return 0
}

// TestThreeProcessesShareTheDayCeiling: three processes dream at once
// under one max_cost_per_day, one of them dying mid-dream; the ledger's
// total for the day never exceeds the ceiling, and the ceiling is reached
// (some dreams were refused), so the bound is not met by spending little.
func TestThreeProcessesShareTheDayCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	outs := make([][]byte, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+dir, helperEnv+"_N="+strconv.Itoa(i))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range 3 {
		if errs[i] != nil {
			t.Fatalf("client %d: %v\n%s", i, errs[i], outs[i])
		}
		t.Logf("client %d: %s", i, outs[i])
	}
	l := Open(dir)
	ds, bad, err := l.Dreams()
	if err != nil || bad != 0 {
		t.Fatalf("Dreams: %v, %d bad lines", err, bad)
	}
	var total Amount
	settled, dead := 0, 0
	for _, d := range ds {
		total = total.Add(d.Spent)
		if d.Settled {
			settled++
		} else {
			dead++
		}
		if d.Spent.USD > d.Reserve.Reserved.USD+1e-9 {
			t.Errorf("dream %s spent %s, over its reservation %s", d.Reserve.ID, Dollars(d.Spent.USD), Dollars(d.Reserve.Reserved.USD))
		}
	}
	t.Logf("%d dreams (%d settled, %d died), day total %s of %s", len(ds), settled, dead, Dollars(total.USD), Dollars(dayCeiling))
	if total.USD > dayCeiling+1e-9 {
		t.Fatalf("the ledger's day total %v exceeds max_cost_per_day %v", total.USD, dayCeiling)
	}
	if dead != 1 {
		t.Errorf("%d dreams died unsettled, want the 1 the helper killed", dead)
	}
	tot, err := l.Totals()
	if err != nil || tot.Day.USD > dayCeiling+1e-9 {
		t.Errorf("Totals = %+v, %v", tot, err)
	}
	if total.USD < dayCeiling/2 {
		t.Errorf("the clients spent only %s of %s: the test never reached the ceiling", Dollars(total.USD), Dollars(dayCeiling))
	}
}
