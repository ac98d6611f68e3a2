package lockbackend

import (
	"context"
	"fmt"
	"os"

	"github.com/dreamkit/dream/internal/lock"
)

// File is the single-machine backend: internal/lock's .consolidate-lock,
// unchanged, behind the Backend interface.
type File struct {
	*lock.Lock
}

// NewFile wraps l.
func NewFile(l *lock.Lock) *File { return &File{Lock: l} }

// Name is NameFile.
func (f *File) Name() string { return NameFile }

// SetTask is a no-op: the file's body is a PID, as the other agents expect,
// and cannot carry more.
func (f *File) SetTask(context.Context, string) error { return nil }

// Fence checks that the lock file still names this process: another agent
// that knows only the file may have reclaimed it after an hour. The file has
// no compare-and-swap, so this narrows the window rather than closing it;
// Complete checks again and reports a takeover.
func (f *File) Fence(context.Context) error {
	if !f.Held() {
		return fmt.Errorf("%w: %w", ErrFenced, lock.ErrNotHeld)
	}
	h, err := f.Lock.Inspect()
	if err != nil {
		return fmt.Errorf("checking the consolidation lock before the commit: %w", err)
	}
	if h.PID != os.Getpid() {
		return fmt.Errorf("%w: the lock file now says %s", ErrFenced, h.Reason)
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
