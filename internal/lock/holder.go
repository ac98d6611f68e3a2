package lock

import (
	"bytes"
	"fmt"
	"time"
)

// Holder describes the lock file as a would-be acquirer sees it.
type Holder struct {
	// Exists says there is a lock file at all.
	Exists bool `json:"exists"`
	// PID is the holder named in the body; 0 when the body is empty or garbage.
	PID int `json:"pid"`
	// MTime is the lock file's mtime, the last consolidation time.
	MTime time.Time `json:"mtime"`
	// Live says TryAcquire would yield to this holder.
	Live bool `json:"live"`
	// Dream says the holder is a dream process (its guard record names the
	// PID in the body, and that process is alive).
	Dream bool `json:"dream"`
	// Reason is a human explanation, e.g. "live pid 123 (12m old)".
	Reason string `json:"reason"`
}

// Inspect describes the current holder. It never modifies anything: it
// neither creates the guard file nor takes any flock, so it cannot make a
// concurrent TryAcquire fail. A lock path that is not a readable regular
// file is an error, which a caller shows (dream status) rather than guess.
func (l *Lock) Inspect() (Holder, error) {
	st, err := readState(l.path)
	if err != nil {
		return Holder{}, err
	}
	dream := l.Held()
	pid, _ := parsePID(st.body)
	if !dream && l.guardPath != "" {
		if rec, ok := readGuardRecord(l.guardPath); ok {
			dream = pid == rec.PID && l.alive(rec.PID)
		}
	}
	if !dream && st.hasHolder {
		// A dream with another state dir: its record is on the inode.
		dream = pid == st.holder.PID && l.alive(pid)
	}
	return classify(st, l.now(), l.alive, dream), nil
}

// classify applies the agents' reclaim rule to one look at the lock file:
// a holder is live when its body is a PID that is alive and the mtime is
// less than StaleAfter old. A dream proven live by its guard is live
// whatever the mtime says. An mtime more than FutureSkew ahead is clock skew
// and, unless a dream is proven live, reclaimable: otherwise it would hold
// the lock (and close the time gate) until the clock caught up.
func classify(st fileState, now time.Time, alive func(int) bool, dream bool) Holder {
	h := Holder{Exists: st.exists, MTime: st.mtime}
	if !st.exists {
		h.Reason = "no lock file"
		return h
	}
	age := now.Sub(st.mtime)
	switch {
	case st.symlink:
		h.Reason = "lock file is a symlink: reclaimable (it is replaced, never followed)"
		return h
	case st.tooBig:
		h.Reason = fmt.Sprintf("garbage body (%d bytes): reclaimable", st.size)
		return h
	}
	pid, ok := parsePID(st.body)
	if !ok {
		if len(bytes.TrimSpace(st.body)) == 0 {
			h.Reason = fmt.Sprintf("idle: last consolidation %s ago", fmtAge(age))
		} else {
			h.Reason = "garbage body: reclaimable"
		}
		return h
	}
	h.PID = pid
	h.Dream = dream
	switch {
	case dream:
		h.Live = true
		h.Reason = fmt.Sprintf("live dream pid %d (%s old)", pid, fmtAge(age))
	case age < -FutureSkew:
		h.Reason = fmt.Sprintf("pid %d, mtime in the future (%s ahead): reclaimable", pid, fmtAge(-age))
	case age >= StaleAfter:
		h.Reason = fmt.Sprintf("stale: pid %d, mtime %s old", pid, fmtAge(age))
	case !alive(pid):
		h.Reason = fmt.Sprintf("dead pid %d: reclaimable", pid)
	default:
		h.Live = true
		h.Reason = fmt.Sprintf("live pid %d (%s old)", pid, fmtAge(age))
	}
	return h
}

// fmtAge renders a duration coarsely, as a person reads a lock's age.
func fmtAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}
