// Package quickgate decides the time gate the way the gate funnel would,
// from the lock file and the journal dir alone, for the hook path: `dream
// maybe` and `dream hook` (and their early start, package early) answer the
// closed time gate with it instead of building a Dreamer.
package quickgate

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/cmd/dream/internal/gatestamp"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/internal/settings"
)

// TimeGateClosed decides the hook path's most common case, the time gate
// closed, with a handful of system calls (an lstat and one look at the lock
// file, one at the journal dir) instead of building a Dreamer, which checks
// every credential path, opens the lock backend and recovers twice before
// MaybeRun reaches its first gate. detail is MaybeRun's own wording of the
// closed gate (funnel.go timeDetail). See Decide.
func TimeGateClosed(s settings.Settings, memoryDir string, now time.Time) (detail string, closed bool) {
	g, closed := Decide(s, memoryDir, now)
	if !closed {
		return "", false
	}
	return g.Detail(gatestamp.Hours(now.Sub(g.Last))), true
}

// Gate is a closed time gate: the last consolidation, the wait the
// settings ask for, and what the decision read.
type Gate struct {
	Last     time.Time
	Wait     time.Duration
	MinHours float64
	// Inputs are the files the decision read, as a gate stamp records
	// them (package gatestamp); nil when it read more than files: a
	// holder's PID in the lock, judged alive.
	Inputs []gatestamp.Input
}

// Detail is the closed gate's detail with hours as the hours figure
// (gatestamp.Hours of the time since the last consolidation).
func (g Gate) Detail(hours string) string {
	return fmt.Sprintf("%sh since the last consolidation, need %gh; opens at %s",
		hours, g.MinHours, g.Last.Add(g.Wait).Format(time.RFC3339))
}

// Decide answers closed only when dream.New and Dreamer.MaybeRun would stop
// at the time gate too: dreaming enabled, the file lock (with the etcd lock
// the last consolidation is the cluster's, not this file's), a lock mtime
// younger than min_hours and not in the future (clock skew opens the gate),
// no dead holder to reclaim and no journal left over (Recover acts on
// either, and reopens the gate). Deciding "dead" without the state dir's
// guard record can only call more holders dead than Recover does, so a
// doubt always falls to the full path.
func Decide(s settings.Settings, memoryDir string, now time.Time) (Gate, bool) {
	if !s.Enabled || memoryDir == "" || (s.Lock != "" && s.Lock != settings.LockFile) {
		return Gate{}, false
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return Gate{}, false
	}
	mem := filepath.Clean(abs)
	home, _ := os.UserHomeDir()
	def := settings.Defaults(os.LookupEnv, home) // dream.DefaultSettings
	minHours := s.MinHours
	if !(minHours > 0) { // NaN included, as in dream.New
		minHours = def.MinHours
	}
	wait := gate.HoursDuration(minHours)
	lk := lock.New(mem, "")
	last, err := lk.LastConsolidatedAt()
	if err != nil || !gatestamp.Closed(last, now, wait, lock.FutureSkew) {
		return Gate{}, false
	}
	h, err := lk.Inspect()
	if err != nil || (h.Exists && h.PID > 0 && !h.Live) {
		return Gate{}, false
	}
	stateDir := s.StateDir
	if stateDir == "" {
		stateDir = def.StateDir
	}
	if journal.HasPending(stateDir, mem) {
		return Gate{}, false
	}
	g := Gate{Last: last, Wait: wait, MinHours: minHours}
	if root, err := journal.Root(stateDir, mem); err == nil && h.PID == 0 {
		g.Inputs = []gatestamp.Input{{Path: lk.Path(), Want: gatestamp.Regular}, {Path: root, Want: gatestamp.AbsentOrEmptyDir}}
	}
	return g, true
}
