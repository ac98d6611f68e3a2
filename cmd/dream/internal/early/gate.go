package early

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/settings"
)

// TimeGateClosed decides the hook path's most common case, the time gate
// closed, with a handful of system calls (an lstat and one look at the lock
// file, one at the journal dir) instead of building a Dreamer, which checks
// every credential path, opens the lock backend and recovers twice before
// MaybeRun reaches its first gate. detail is MaybeRun's own wording of the
// closed gate (funnel.go timeDetail); a test in package main holds the two
// equal.
//
// It answers closed only when dream.New and Dreamer.MaybeRun would stop at
// the time gate too: dreaming enabled, the file lock (with the etcd lock the
// last consolidation is the cluster's, not this file's), a lock mtime
// younger than min_hours and not in the future (clock skew opens the gate),
// no dead holder to reclaim and no journal left over (Recover acts on
// either, and reopens the gate). Deciding "dead" without the state dir's
// guard record can only call more holders dead than Recover does, so a
// doubt always falls to the full path.
func TimeGateClosed(s settings.Settings, memoryDir string, now time.Time) (detail string, closed bool) {
	if !s.Enabled || memoryDir == "" || (s.Lock != "" && s.Lock != settings.LockFile) {
		return "", false
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return "", false
	}
	mem := filepath.Clean(abs)
	home, _ := os.UserHomeDir()
	def := settings.Defaults(os.LookupEnv, home)
	minHours := s.MinHours
	if !(minHours > 0) { // NaN included, as in dream.New
		minHours = def.MinHours
	}
	wait := gate.HoursDuration(minHours)
	lk := lock.New(mem, "")
	last, err := lk.LastConsolidatedAt()
	// The gate's rule for closed: a last consolidation that is known, not
	// more than the lock's skew allowance ahead of now, and less than
	// min_hours ago.
	if err != nil || last.IsZero() || last.After(now.Add(lock.FutureSkew)) || now.Sub(last) >= wait {
		return "", false
	}
	h, err := lk.Inspect()
	if err != nil || (h.Exists && h.PID > 0 && !h.Live) {
		return "", false
	}
	stateDir := s.StateDir
	if stateDir == "" {
		stateDir = def.StateDir
	}
	if journal.HasPending(stateDir, mem) {
		return "", false
	}
	return fmt.Sprintf("%.1fh since the last consolidation, need %gh; opens at %s",
		now.Sub(last).Hours(), minHours, last.Add(wait).Format(time.RFC3339)), true
}
