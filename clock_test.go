package dream

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

// TestHugeMinHoursKeepsTheTimeGateClosed: min_hours past what a Duration
// holds (about 2.56 million hours) must saturate, not wrap around into a
// gate that opens on every call.
func TestHugeMinHoursKeepsTheTimeGateClosed(t *testing.T) {
	for _, h := range []float64{2_600_000, 1e12, 1e300} {
		f := newFixture(t)
		lockPath := filepath.Join(f.mem, lock.FileName)
		if err := os.WriteFile(lockPath, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		last := f.clock.Now().Add(-48 * time.Hour)
		if err := os.Chtimes(lockPath, last, last); err != nil {
			t.Fatal(err)
		}
		f.addSessions(t, 8, f.clock.Now().Add(-time.Hour), "s")
		d := f.dreamer(t, func(c *Config) { c.Settings.MinHours = h })
		res, err := d.MaybeRun(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Gate != GateTime || f.runner.runs.Load() != 0 {
			t.Errorf("min_hours %g: gate %q (%s), runs %d; want the time gate closed", h, res.Gate, res.Detail, f.runner.runs.Load())
		}
	}
}

// TestFutureLockMtimeCountsSessions: a lock mtime in the future (clock skew)
// opens the time gate, and the session gate must then count the sessions
// there are, not the sessions touched "since the future" (none, until the
// clock caught up, so the dream never ran).
func TestFutureLockMtimeCountsSessions(t *testing.T) {
	f := newFixture(t)
	lockPath := filepath.Join(f.mem, lock.FileName)
	if err := os.WriteFile(lockPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	future := f.clock.Now().Add(30 * 24 * time.Hour)
	if err := os.Chtimes(lockPath, future, future); err != nil {
		t.Fatal(err)
	}
	f.addSessions(t, 6, f.clock.Now().Add(-2*time.Hour), "s")
	d := f.dreamer(t, nil)
	st, err := d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.SessionsTouchedSince != 6 || st.Next != GateReady {
		t.Errorf("status: %d sessions, next %q; want 6 and ready\n%+v", st.SessionsTouchedSince, st.Next, st.Gates)
	}
	res, err := d.MaybeRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Gate != GateReady || f.runner.runs.Load() != 1 || res.Report == nil || res.Report.SessionsReviewed != 6 {
		t.Fatalf("maybe: gate %q (%s), runs %d; want a dream over 6 sessions", res.Gate, res.Detail, f.runner.runs.Load())
	}
	// The dream's Complete wrote a true mtime: the gates are back to normal.
	at, err := os.Stat(lockPath)
	if err != nil || at.ModTime().After(time.Now().Add(time.Minute)) {
		t.Errorf("lock mtime after the dream: %v %v", at.ModTime(), err)
	}
}
