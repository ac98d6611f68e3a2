package raceenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct{ cur, want string }{
		{"", "atexit_sleep_ms=20"},
		{"halt_on_error=1", "halt_on_error=1 atexit_sleep_ms=20"},
		{"  log_path=/dev/stderr  ", "log_path=/dev/stderr atexit_sleep_ms=20"},
		{"atexit_sleep_ms=500", "atexit_sleep_ms=500"},
		{"halt_on_error=1 atexit_sleep_ms=0", "halt_on_error=1 atexit_sleep_ms=0"},
	} {
		if got := Value(tc.cur); got != tc.want {
			t.Errorf("Value(%q) = %q, want %q", tc.cur, got, tc.want)
		}
	}
}

// TestChildExitsWithoutTheSleep starts this test binary again as a child
// with and without the option: under -race the child without it takes the
// race runtime's second to exit, and with it does not. Without -race both
// are quick and the test only checks that the child runs.
func TestChildExitsWithoutTheSleep(t *testing.T) {
	if os.Getenv("RACEENV_CHILD") == "1" {
		return
	}
	run := func(env ...string) time.Duration {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildExitsWithoutTheSleep$")
		cmd.Env = append(append(os.Environ(), "RACEENV_CHILD=1"), env...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	short := run(Env())
	if !raceEnabled {
		return
	}
	long := run("GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=1000"))
	if long < time.Second {
		t.Fatalf("the child with the default exit sleep took %v: the race runtime no longer sleeps at exit, and this package has no job", long)
	}
	if short >= long {
		t.Fatalf("the child with %s took %v, the one without %v", exitSleep, short, long)
	}
}
