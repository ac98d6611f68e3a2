package lockbackend

import (
	"context"
	"fmt"

	"github.com/dreamkit/dream/internal/lock"
)

// File is the single-machine backend: internal/lock's .consolidate-lock,
// unchanged, behind the Backend interface.
type File struct {
	*lock.Lock
}

// NewFile wraps l.
func NewFile(l *lock.Lock) *File { return &File{Lock: l} }

// Acquire takes the lock file (internal/lock's TryAcquire).
func (f *File) Acquire(ctx context.Context) (*Held, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prior, err := f.TryAcquire()
	if err != nil {
		return nil, err
	}
	return NewHeld(prior, f.Lock), nil
}

// Name is NameFile.
func (f *File) Name() string { return NameFile }

// SetTask is a no-op: the file's body is a PID, as the other agents expect,
// and cannot carry more.
func (f *File) SetTask(context.Context, string) error { return nil }

// Fence checks that the lock file still is ours (internal/lock's Verify):
// another agent that knows only the file may have reclaimed it. The file
// has no compare-and-swap, so this narrows the window rather than closing
// it; Complete checks again and reports a takeover.
func (f *File) Fence(context.Context) error {
	if !f.Held() {
		return fmt.Errorf("%w: %w", ErrFenced, lock.ErrNotHeld)
	}
	if err := f.Verify(); err != nil {
		return fmt.Errorf("%w: %w", ErrFenced, err)
	}
	return nil
}

// Describe reports the file's holder.
func (f *File) Describe(context.Context) (Status, error) {
	h, err := f.Lock.Inspect()
	if err != nil {
		return Status{}, err
	}
	s := Status{Backend: NameFile, Where: f.Path(), Held: h.Live, PID: h.PID, Reason: h.Reason, File: h}
	if h.Live && !h.MTime.IsZero() {
		t := h.MTime
		s.Since = &t
	}
	return s, nil
}

// Close does nothing: the file lock keeps nothing open between calls.
func (f *File) Close() error { return nil }

var _ Backend = (*File)(nil)
