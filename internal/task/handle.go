package task

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
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
		kill:    make(chan struct{}),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
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

// Update applies fn to a copy of the entry and writes it only if something
// changed, so a high-frequency progress callback costs nothing when idle.
// It enforces the entry's invariants: identity, status, start, end and error
// are not Update's to change; the phase never goes back from updating, and a
// touched file means updating; only the last MaxTurns turns are kept.
// After Finish it changes nothing and returns ErrFinished.
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
	if err := h.reg.write(next); err != nil {
		return err
	}
	h.entry = next
	return nil
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
// phase to updating.
func (h *Handle) AddFileTouched(rel string) error {
	if rel == "" {
		return errors.New("recording touched file: empty path")
	}
	return h.Update(func(e *Entry) {
		if !slices.Contains(e.FilesTouched, rel) {
			e.FilesTouched = append(e.FilesTouched, rel)
		}
	})
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
	defer h.mu.Unlock()
	if h.finished {
		return nil
	}
	next := h.entry.clone()
	now := stamp(h.reg.now())
	next.Status, next.Error, next.EndedAt = status, errText, &now
	if err := h.reg.write(next); err != nil {
		return fmt.Errorf("finishing task %s: %w", next.ID, err)
	}
	h.entry = next
	h.finished = true
	close(h.stop)
	<-h.stopped
	_ = os.Remove(h.reg.markerPath(next.ID))
	return nil
}

// KillRequested is closed when another process (or Registry) asked, through
// Kill, for this task to stop. The owner should cancel the dream, roll back,
// and Finish with StatusKilled.
func (h *Handle) KillRequested() <-chan struct{} { return h.kill }

// pollKill watches for the kill marker until Finish. Polling a file keeps
// the protocol trivial across processes and platforms; at the default
// interval it costs one stat per 200ms.
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
			if _, err := os.Lstat(marker); err == nil {
				h.killOnce.Do(func() { close(h.kill) })
				<-h.stop
				return
			}
		}
	}
}
