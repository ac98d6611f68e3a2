package main

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/internal/settings"
	"github.com/dreamkit/dream/provider"
)

// timeGateClosed decides the hook path's most common case, the time gate
// closed, with a handful of system calls (an lstat and one look at the lock
// file, one at the journal dir) instead of building a Dreamer, which checks
// every credential path, opens the lock backend and recovers twice before
// MaybeRun reaches its first gate.
//
// It answers closed only when dream.New and Dreamer.MaybeRun would stop at the
// time gate too: dreaming enabled, a lock mtime younger than min_hours and
// not in the future (clock skew opens the gate), no dead holder to reclaim
// and no journal left over (Recover acts on either, and reopens the gate).
// Deciding "dead" without the state dir's guard record can only call more
// holders dead than Recover does, so a doubt always falls to the full path.
// detail is MaybeRun's own wording of the closed gate (funnel.go timeDetail).
func timeGateClosed(s settings.Settings, memoryDir string, now time.Time) (detail string, closed bool) {
	if !s.Enabled || memoryDir == "" {
		return "", false
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return "", false
	}
	mem := filepath.Clean(abs)
	def := dream.DefaultSettings()
	minHours := s.MinHours
	if !(minHours > 0) { // NaN included, as in dream.New
		minHours = def.MinHours
	}
	wait := gate.HoursDuration(minHours)
	lk := lock.New(mem, "")
	last, err := lk.LastConsolidatedAt()
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

// maybeFastPath is `dream maybe` when timeGateClosed settles it (done): the
// same output and exit code as the full funnel, which runs whenever the answer is
// not certain. It is not taken for nanobot's flow (its dream dir is not the
// memory dir given), nor with the etcd lock backend (whose last
// consolidation is the cluster's, not this file's), nor with provider
// settings that the full path would reject.
func (a *app) maybeFastPath() (done bool) {
	s := a.loaded.Settings
	if s.Lock != "" && s.Lock != settings.LockFile {
		return false
	}
	if _, err := provider.Choose(s, a.getenv); err != nil {
		return false
	}
	mem, _, _, err := a.locations()
	if err != nil || a.isNanobot() || (a.layout != nil && a.layout.Host == dream.HostNanobot) {
		return false
	}
	detail, closed := timeGateClosed(s, mem, time.Now())
	if !closed {
		return false
	}
	res := dream.MaybeResult{Gate: dream.GateTime, Detail: detail}
	if a.jsonOut {
		a.printJSON(res)
	} else {
		fmt.Fprintf(a.stdout, "no dream: the %s gate is closed: %s\n", res.Gate, res.Detail)
	}
	return true
}

// shortLivedHeap is the heap a short hook-path process may reach before the
// collector runs at all (see relaxGC).
const shortLivedHeap = 64 << 20

var relaxed struct {
	sync.Mutex
	n       int   // callers inside relaxGC
	percent int   // what SetGCPercent was before the first
	limit   int64 // what SetMemoryLimit was before the first
}

// relaxGC switches the collector off below shortLivedHeap until the
// returned func is called. `dream status` is a process of a few tens of
// milliseconds whose heap is mostly package init (about 2 MB) plus a scan's
// listing buffers; a collection cycle when it crosses the first 4 MB goal
// costs more than the memory it would free. Calls nest and may overlap (an
// embedding or a test calling Main more than once): the last one out
// restores the settings the first one found.
func relaxGC() (restore func()) {
	relaxed.Lock()
	if relaxed.n == 0 {
		relaxed.percent = debug.SetGCPercent(-1)
		relaxed.limit = debug.SetMemoryLimit(shortLivedHeap)
	}
	relaxed.n++
	relaxed.Unlock()
	return func() {
		relaxed.Lock()
		defer relaxed.Unlock()
		relaxed.n--
		if relaxed.n == 0 {
			debug.SetMemoryLimit(relaxed.limit)
			debug.SetGCPercent(relaxed.percent)
		}
	}
}
