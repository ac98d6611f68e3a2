package dream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
)

// gateWorld is one combination of gate states for TestFunnelUsersAgree.
type gateWorld struct {
	enabled, running bool
	time             string // "closed", "open", "never", "skew"
	throttled        bool
	sessionsAtMin    bool
	lockHeld         bool
}

func (w gateWorld) String() string {
	return fmt.Sprintf("enabled=%v/running=%v/time=%s/throttled=%v/sessions_at_min=%v/lock_held=%v",
		w.enabled, w.running, w.time, w.throttled, w.sessionsAtMin, w.lockHeld)
}

// open is the oracle: each gate's state, from the combination alone.
func (w gateWorld) open() map[string]bool {
	return map[string]bool{
		GateEnabled:  w.enabled,
		GateRunning:  !w.running,
		GateTime:     w.time != "closed",
		GateThrottle: !w.throttled,
		GateSessions: w.sessionsAtMin,
		GateLock:     !w.lockHeld,
	}
}

// want is the first closed gate in funnel order, or ready.
func (w gateWorld) want() string {
	open := w.open()
	for _, g := range []string{GateEnabled, GateRunning, GateTime, GateThrottle, GateSessions, GateLock} {
		if !open[g] {
			return g
		}
	}
	return GateReady
}

// build makes a fresh memory, sessions dir and Dreamer in this state. The
// lock file, when there is one, is ten minutes old by the real clock, so a
// PID body in it is a live holder for the lock (which judges liveness by
// the real clock); the fake clock the gates read is set around that mtime.
func (w gateWorld) build(t *testing.T) (*Dreamer, *fixture) {
	t.Helper()
	f := newFixture(t)
	mtime := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	switch w.time {
	case "never":
		f.clock.t = time.Now()
	case "closed":
		f.clock.t = mtime.Add(time.Hour)
	case "open":
		f.clock.t = mtime.Add(48 * time.Hour)
	case "skew": // the lock's mtime is three days ahead of this clock
		f.clock.t = mtime.Add(-72 * time.Hour)
	}
	if w.time != "never" {
		body := ""
		if w.lockHeld {
			body = strconv.Itoa(os.Getppid()) // alive for the whole test
		}
		p := filepath.Join(f.mem, lock.FileName)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	n := 4
	if w.sessionsAtMin {
		n = 5
	}
	f.addSessions(t, n, mtime.Add(time.Minute), "s")
	d := f.dreamer(t, func(c *Config) { c.Settings.Enabled = w.enabled })
	d.mu.Lock()
	d.running = w.running
	if w.throttled {
		d.lastScan = f.clock.Now().Add(-5 * time.Minute)
	}
	d.mu.Unlock()
	return d, f
}

// TestFunnelUsersAgree: the background idle hook (did a dream start?), the
// foreground funnel (which gate, did it run?) and Status (Next, and each
// gate's Open) agree with one another and with the oracle on every
// combination of gate states. Each user gets its own fresh world, since
// the foreground funnel consumes the throttle and may dream.
func TestFunnelUsersAgree(t *testing.T) {
	var worlds []gateWorld
	for _, enabled := range []bool{true, false} {
		for _, running := range []bool{false, true} {
			for _, tm := range []string{"closed", "open", "never", "skew"} {
				for _, throttled := range []bool{false, true} {
					for _, atMin := range []bool{false, true} {
						for _, held := range []bool{false, true} {
							if tm == "never" && held {
								continue // a held lock is a lock file, whose mtime is a last consolidation
							}
							worlds = append(worlds, gateWorld{enabled, running, tm, throttled, atMin, held})
						}
					}
				}
			}
		}
	}
	ctx := context.Background()
	for _, w := range worlds {
		t.Run(w.String(), func(t *testing.T) {
			want := w.want()

			d, _ := w.build(t)
			st, err := d.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Next != want {
				t.Errorf("Status.Next = %q, want %q (%+v)", st.Next, want, st.Gates)
			}
			oracle := w.open()
			if len(st.Gates) != len(oracle) {
				t.Errorf("Status shows %d gates, want %d", len(st.Gates), len(oracle))
			}
			for _, g := range st.Gates {
				if g.Open != oracle[g.Name] || g.Detail == "" {
					t.Errorf("Status gate %s open = %v (%q), want %v", g.Name, g.Open, g.Detail, oracle[g.Name])
				}
			}

			d, f := w.build(t)
			res, err := d.MaybeRun(ctx)
			ran := f.runner.runs.Load() > 0
			if res.Gate != want || ran != (want == GateReady) {
				t.Errorf("MaybeRun: gate %q (%s), ran %v; want %q", res.Gate, res.Detail, ran, want)
			}
			switch {
			case want == GateLock:
				var he *LockHeldError
				if !errors.Is(err, ErrLockHeld) || !errors.As(err, &he) || he.PID != os.Getppid() {
					t.Errorf("MaybeRun at a held lock: err %v, want a *LockHeldError naming pid %d", err, os.Getppid())
				}
			case err != nil:
				t.Errorf("MaybeRun: %v", err)
			case want == GateReady && (res.Report == nil || res.Report.Status != StatusCompleted):
				t.Errorf("MaybeRun ran no completed dream: %+v", res.Report)
			}

			d, f = w.build(t)
			d.MaybeStart()
			d.waitIdle()
			if ran := f.runner.runs.Load() > 0; ran != (want == GateReady) {
				t.Errorf("MaybeStart started a dream = %v, want %v (first closed gate %q)", ran, want == GateReady, want)
			}
		})
	}
}

// TestPublicJSONMatchesInternal: each public type converted at the API's
// boundary marshals with exactly the JSON keys of the internal type it
// mirrors, so the CLI's --json output does not change with the conversion.
func TestPublicJSONMatchesInternal(t *testing.T) {
	keys := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}
	now := time.Now()
	cases := []struct {
		name             string
		internal, public any
	}{
		{"Change", journal.Change{Path: "a.md", Kind: "added", Added: 1}, changesOf([]journal.Change{{Path: "a.md", Kind: "added", Added: 1}})[0]},
		{"StagedRun", journal.Info{ID: "x", State: "parked", PID: 1, CreatedAt: now}, stagedRunsOf([]journal.Info{{ID: "x", State: "parked", PID: 1, CreatedAt: now}})[0]},
		{"HistoryEntry", audit.Entry{ID: "x", Files: []audit.FileStat{{Path: "a"}}}, historyEntryOf(audit.Entry{ID: "x", Files: []audit.FileStat{{Path: "a"}}})},
	}
	for _, c := range cases {
		if a, b := keys(c.internal), keys(c.public); a != b {
			t.Errorf("%s: internal keys %s, public keys %s", c.name, a, b)
		}
	}
}
