package main

import (
	"slices"
	"testing"
)

// TestHookPassesItsSettingsFlagsOn: the detached `dream maybe` sees the
// settings flags the hook line gave (the hook decided its cheap gates with
// them), but not the locations, which the job names itself. Before, a hook
// run with --min-hours 1 decided "open" and its child then refused with the
// configured 24h.
func TestHookPassesItsSettingsFlagsOn(t *testing.T) {
	a := &app{}
	fs, raw := a.newFlags("hook")
	args := []string{"--host", "claude", "--memory-dir", "/m", "--min-hours", "1", "--provider", "offline", "--timeout", "5m", "--session", "abc"}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the hook refuses flags its maybe takes: %v", err)
	}
	got := passOn(fs, raw)
	want := []string{"--min-hours", "1", "--provider", "offline", "--timeout", "5m"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("passOn = %q, want %q", got, want)
	}
}
