package dream

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAlreadyAppliedError: it says when and which commit, and matches both
// ErrAlreadyApplied and ErrNotStaged however it is wrapped.
func TestAlreadyAppliedError(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 15, 0, 0, time.UTC)
	err := fmt.Errorf("apply: %w", &AlreadyAppliedError{ID: "20261201-101500-3f2a", Commit: "0123456789abcdef0123", At: at})
	if !errors.Is(err, ErrAlreadyApplied) || !errors.Is(err, ErrNotStaged) || errors.Is(err, ErrLockHeld) {
		t.Fatalf("errors.Is on %v", err)
	}
	for _, want := range []string{"20261201-101500-3f2a was already applied", "2026-12-01T10:15:00Z", "0123456789ab"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	var ae *AlreadyAppliedError
	if !errors.As(err, &ae) || ae.Commit != "0123456789abcdef0123" {
		t.Errorf("errors.As: %+v", ae)
	}
}
