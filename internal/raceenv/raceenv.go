// Package raceenv shortens the race runtime's exit in the processes that
// tests start.
//
// A binary built with -race, on its way out, sleeps for atexit_sleep_ms
// (1000 by default) whenever it has more than one thread, which a Go
// program always has, so that other threads can finish a race report. The
// end-to-end tests start the race-built dream a few hundred times and the
// multi-process tests re-run their own race-built binary as helpers: that
// second per process was most of their time (`dream help log` took 1.03 s
// of wall time and 5 ms of CPU; 0.03 s with the sleep at 0). A race found
// in a child still fails its test: the report is written when the race is
// found, and the race runtime still exits with status 66. The 20 ms kept
// give a report begun just before exit time to finish.
//
// It is for tests; dream itself never imports it.
package raceenv

import (
	"os"
	"strings"
)

// exitSleep is the option added to GORACE.
const exitSleep = "atexit_sleep_ms=20"

// Value is GORACE for a child given the current value: cur with exitSleep
// added, unless cur already chooses an exit sleep of its own.
func Value(cur string) string {
	opts := strings.Fields(cur)
	for _, opt := range opts {
		if strings.HasPrefix(opt, "atexit_sleep_ms=") {
			return cur
		}
	}
	return strings.Join(append(opts, exitSleep), " ")
}

// Env is the GORACE entry for a child's environment built from scratch.
func Env() string {
	return "GORACE=" + Value(os.Getenv("GORACE"))
}

// Setenv sets GORACE in this process's environment, for the children that
// inherit it (an exec.Cmd whose Env is nil or built from os.Environ). It
// changes nothing for this process: the race runtime read GORACE when it
// started.
func Setenv() {
	os.Setenv("GORACE", Value(os.Getenv("GORACE")))
}
