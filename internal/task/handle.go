package task

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/dreamkit/dream/llm"
)

// Handle is the running dream's own view of its entry; it is the entry's
// only writer until Finish. It is safe for concurrent use.
type Handle struct {
	reg *Registry
	id  string // immutable copy of entry.ID, readable without the mutex

	mu       sync.Mutex
	entry    Entry
	finished bool
	// touched holds every file recorded, so a repeat is found in O(1)
	// whatever the count; the entry itself lists at most MaxFilesListed.
	touched map[string]struct{}
	// dirty means entry has changes not yet on disk; written is when the
	// entry was last written. Progress is coalesced: at most one write per
	// reg.flushEvery, by the poller, and always one at Finish.
	dirty   bool
	written time.Time

	kill     chan struct{}
	killOnce sync.Once
	stop     chan struct{}
	stopped  chan struct{}
}

func newHandle(r *Registry, e Entry) *Handle {
	h := &Handle{
		reg:     r,
		id:      e.ID,
		entry:   e,
		touched: make(map[string]struct{}, len(e.FilesTouched)),
		written: r.now(),
		kill:    make(chan struct{}),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	for _, f := range e.FilesTouched {
		h.touched[f] = struct{}{}
	}
	go h.pollKill()
	return h
}

// ID is the task's id.
func (h *Handle) ID() string { return h.id }

// Entry returns a copy of the entry as last written.
func (h *Handle) Entry() Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.entry.clone()
}

// Update applies fn to a copy of the entry and keeps the result if
// something changed, so a high-frequency progress callback costs nothing
// when idle. It enforces the entry's invariants: identity, status, start,
// end and error are not Update's to change, nor the touched files (only
// AddFileTouched adds to them, and they never shrink); the phase never goes
// back from updating, and a touched file means updating; only the last
// MaxTurns turns are kept. The change reaches the disk within the registry's
// flush interval (at once for a phase change, and always at Finish), not on
// every call: a dream reports thousands of events and none of them is worth
// an fsync. After Finish it changes nothing and returns ErrFinished.
func (h *Handle) Update(fn func(e *Entry)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished {
		return fmt.Errorf("updating task %s: %w", h.id, ErrFinished)
	}
	cur := h.entry
	next := cur.clone()
	fn(&next)
	next.ID, next.Status, next.PID, next.StartedAt = cur.ID, cur.Status, cur.PID, cur.StartedAt
	next.EndedAt, next.Error = cur.EndedAt, cur.Error
	next.FilesTouched, next.FilesTouchedTotal = cur.FilesTouched, cur.FilesTouchedTotal
	if next.Phase != PhaseStarting && next.Phase != PhaseUpdating {
		next.Phase = cur.Phase
	}
	if cur.Phase == PhaseUpdating || len(next.FilesTouched) > 0 {
		next.Phase = PhaseUpdating
	}
	next.Turns = lastTurns(next.Turns)
	next = next.clone() // normalise nil slices the func may have set
	if reflect.DeepEqual(next, cur) {
		return nil
	}
	return h.changed(next, next.Phase != cur.Phase)
}

// changed installs next as the entry and writes it now when urgent or when
// the registry does not coalesce; otherwise it leaves it for the poller.
// The caller holds h.mu.
func (h *Handle) changed(next Entry, urgent bool) error {
	h.entry = next
	h.dirty = true
	if urgent || h.reg.flushEvery <= 0 {
		return h.flushLocked()
	}
	return nil
}

// flushLocked writes a dirty entry, without an fsync: progress is advisory
// and is rewritten within the interval; the terminal state written by
// Finish is the one made durable. The caller holds h.mu.
func (h *Handle) flushLocked() error {
	if !h.dirty {
		return nil
	}
	if err := h.reg.writeFast(h.entry); err != nil {
		return err
	}
	h.dirty = false
	h.written = h.reg.now()
	return nil
}

// Flush writes any progress not yet on disk.
func (h *Handle) Flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished {
		return nil
	}
	return h.flushLocked()
}

// AddTurn records one turn's summary; an empty summary changes nothing.
func (h *Handle) AddTurn(summary string) error {
	if summary == "" {
		return nil
	}
	return h.Update(func(e *Entry) { e.Turns = append(e.Turns, summary) })
}

// AddToolCall counts one tool call.
func (h *Handle) AddToolCall() error {
	return h.Update(func(e *Entry) { e.ToolCalls++ })
}

// AddFileTouched records a memory file written (relative to the memory
// dir); a file already recorded changes nothing. The first one flips the
// phase to updating. The entry lists the first MaxFilesListed files and
// counts them all in FilesTouchedTotal (the full list is the audit
// commit's): a dream that touches 30,000 files must not rewrite a list of
// 30,000 at each of them.
func (h *Handle) AddFileTouched(rel string) error {
	if rel == "" {
		return errors.New("recording touched file: empty path")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished {
		return fmt.Errorf("updating task %s: %w", h.id, ErrFinished)
	}
	if _, seen := h.touched[rel]; seen {
		return nil
	}
	h.touched[rel] = struct{}{}
	next := h.entry // the slices are shared, but only ever appended to under h.mu
	if len(next.FilesTouched) < MaxFilesListed {
		next.FilesTouched = append(next.FilesTouched, rel)
	}
	next.FilesTouchedTotal++
	urgent := next.Phase != PhaseUpdating
	next.Phase = PhaseUpdating
	return h.changed(next, urgent)
}

// SetUsage records the dream's cumulative token usage.
func (h *Handle) SetUsage(u llm.Usage) error {
	return h.Update(func(e *Entry) { e.Usage = u })
}

// Finish ends the task with a terminal status. The first successful Finish
// wins; later calls change nothing and return nil, so a kill racing a
// natural completion never finishes the task twice. It stops the kill
// poller and removes any kill marker.
func (h *Handle) Finish(status Status, errText string) error {
	if !status.finished() {
		return fmt.Errorf("finishing task %s: %q is not a terminal status", h.id, status)
	}
	h.mu.Lock()
	if h.finished {
		h.mu.Unlock()
		return nil
	}
	next := h.entry.clone()
	now := stamp(h.reg.now())
	next.Status, next.Error, next.EndedAt = status, errText, &now
	if err := h.reg.write(next); err != nil {
		h.mu.Unlock()
		return fmt.Errorf("finishing task %s: %w", next.ID, err)
	}
	h.entry = next
	h.dirty = false
	h.finished = true
	h.mu.Unlock()
	// The poller may be waiting for h.mu to flush: stop it only now.
	close(h.stop)
	<-h.stopped
	_ = os.Remove(h.reg.markerPath(next.ID))
	return nil
}

// KillRequested is closed when another process (or Registry) asked, through
// Kill, for this task to stop. The owner should cancel the dream, roll back,
// and Finish with StatusKilled.
func (h *Handle) KillRequested() <-chan struct{} { return h.kill }

// pollKill watches for the kill marker until Finish, and writes coalesced
// progress when it is due. Polling a file keeps the protocol trivial across
// processes and platforms; at the default interval it costs one stat per
// 200ms.
func (h *Handle) pollKill() {
	defer close(h.stopped)
	t := time.NewTicker(h.reg.pollInterval)
	defer t.Stop()
	marker := h.reg.markerPath(h.id)
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.flushDue()
			if _, err := os.Lstat(marker); err == nil {
				h.killOnce.Do(func() { close(h.kill) })
				<-h.stop
				return
			}
		}
	}
}

// flushDue writes dirty progress once the flush interval has passed since
// the last write. A failed write is retried at the next tick; Finish writes
// the final state whatever happened here.
func (h *Handle) flushDue() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished || !h.dirty || h.reg.now().Sub(h.written) < h.reg.flushEvery {
		return
	}
	_ = h.flushLocked()
}
