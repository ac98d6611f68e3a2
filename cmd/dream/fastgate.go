package main

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
	"github.com/dreamkit/dream/cmd/dream/internal/quickgate"
	"github.com/dreamkit/dream/provider"
)

// maybeFastPath is `dream maybe` when quickgate.TimeGateClosed settles it
// (done): the same output and exit code as the full funnel, which runs
// whenever the answer is not certain. The binary's early start (package
// early) answers most of these before main; this is the same answer for
// what it hands over (a warning to print, a base URL to check) and for
// Main called in-process. It is not taken for nanobot's flow (its dream
// dir is not the memory dir given), nor with provider settings that the
// full path would reject.
func (a *app) maybeFastPath() (done bool) {
	s := a.loaded.Settings
	if _, err := provider.Choose(s, a.getenv); err != nil {
		return false
	}
	mem, _, _, err := a.locations()
	if err != nil || a.isNanobot() || (a.layout != nil && a.layout.Host == dream.HostNanobot) {
		return false
	}
	detail, closed := quickgate.TimeGateClosed(s, mem, time.Now())
	if !closed {
		return false
	}
	res := dream.MaybeResult{Gate: dream.GateTime, Detail: detail}
	if a.jsonOut {
		a.printJSON(res)
	} else {
		cmdline.SayGateClosed(a.stdout, res.Gate, res.Detail)
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
