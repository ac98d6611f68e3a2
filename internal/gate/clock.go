package gate

import (
	"math"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

// HoursDuration turns a number of hours (min_hours) into a Duration,
// saturating at the largest Duration instead of overflowing: converted
// naively, 2.6 million hours or more wraps around to a negative Duration and
// the time gate opens on every call. NaN and values <= 0 give 0, which the
// caller replaces with its default.
func HoursDuration(hours float64) time.Duration {
	if math.IsNaN(hours) || hours <= 0 {
		return 0
	}
	ns := hours * float64(time.Hour)
	if ns >= float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// SessionsSince is the time the session gate counts transcripts from, given
// the last consolidation time (the lock's mtime). A last time more than the
// lock's FutureSkew ahead of now is clock skew, and the time gate already
// treats it as no consolidation at all; counting "since the future" would
// count nothing until the clock caught up, so the session gate keeps the
// time gate's view: it counts every transcript (the zero time). The next
// dream's Complete writes a true mtime, and the gates are back to normal.
func SessionsSince(now, last time.Time) time.Time {
	if last.After(now.Add(lock.FutureSkew)) {
		return time.Time{}
	}
	return last
}
