package lockbackend

import (
	"fmt"
	"sync"
	"time"

	"github.com/dreamkit/dream/internal/lock"
)

// Releaser is what a backend implementation gives NewHeld: its own way to
// end one acquisition. Rollback's argument is the prior time the Held
// recorded, never one a caller chose.
type Releaser interface {
	Complete() error
	Rollback(prior time.Time) error
}

// Held is one acquisition of the consolidation lock. It owns the last
// consolidation time before the acquisition (Prior), so the only rollback a
// caller can make is to that time: two dreams' priors cannot be swapped, and
// a caller that never saw Prior cannot rewind the gate to a time of its own.
// Exactly one of Complete or Rollback takes effect; later calls return
// lock.ErrNotHeld.
type Held struct {
	prior time.Time
	rel   Releaser

	mu   sync.Mutex
	done bool
}

// NewHeld is called by a backend's Acquire once it holds the lock.
func NewHeld(prior time.Time, rel Releaser) *Held {
	return &Held{prior: prior, rel: rel}
}

// Prior is the last consolidation time before this acquisition; zero when
// there was none.
func (h *Held) Prior() time.Time { return h.prior }

// Complete ends a successful consolidation: the lock's time moves to now
// and the lock is released.
func (h *Held) Complete() error {
	if !h.end() {
		return fmt.Errorf("completing: %w", lock.ErrNotHeld)
	}
	return h.rel.Complete()
}

// Rollback ends anything else: the lock's time goes back to Prior and the
// lock is released.
func (h *Held) Rollback() error {
	if !h.end() {
		return fmt.Errorf("rolling back: %w", lock.ErrNotHeld)
	}
	return h.rel.Rollback(h.prior)
}

// Release is Complete when complete, else Rollback: for the callers whose
// step decides at its end whether it counted as a consolidation.
func (h *Held) Release(complete bool) error {
	if complete {
		return h.Complete()
	}
	return h.Rollback()
}

// Done reports whether Complete or Rollback was called.
func (h *Held) Done() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done
}

func (h *Held) end() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return false
	}
	h.done = true
	return true
}
