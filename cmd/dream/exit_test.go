package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
)

// TestClassify pins the one mapping from an error to an exit code and a
// JSON code, wrapped or not.
func TestClassify(t *testing.T) {
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	held := &dream.LockHeldError{LockHolder: dream.LockHolder{PID: 42, Host: "build-01", Since: &since, TaskID: "t1", Backend: "file"}}
	for _, tt := range []struct {
		name string
		err  error
		exit int
		code string
	}{
		{"usage", usagef("no memory directory"), exitUsage, codeUsage},
		{"wrapped usage", fmt.Errorf("x: %w", usagef("bad")), exitUsage, codeUsage},
		{"lock held typed", held, exitHeld, codeLockHeld},
		{"lock held wrapped", fmt.Errorf("apply: %w", held), exitHeld, codeLockHeld},
		{"lock held sentinel", dream.ErrLockHeld, exitHeld, codeLockHeld},
		{"compact locked", fmt.Errorf("refused: %w", nanobot.ErrSessionsLocked), exitHeld, codeLocked},
		{"compact active", nanobot.ErrSessionActive, exitFailed, codeActive},
		{"no remote", dream.ErrNoRemote, exitUsage, codeNoRemote},
		{"plain", errors.New("disk full"), exitFailed, codeFailed},
		{"reported failure", reported(exitFailed, errors.New("the dream timed out")), exitFailed, codeFailed},
		{"interrupted", fmt.Errorf("kill: %w", errInterrupted), exitFailed, codeInterrupted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err, nil)
			if got.ExitCode != tt.exit || got.Code != tt.code {
				t.Fatalf("classify(%v) = exit %d code %q, want %d %q", tt.err, got.ExitCode, got.Code, tt.exit, tt.code)
			}
			if (got.Holder != nil) != (tt.code == codeLockHeld && tt.err != dream.ErrLockHeld) {
				t.Errorf("holder %+v", got.Holder)
			}
		})
	}
	if h := classify(held, nil).Holder; h.PID != 42 || h.Host != "build-01" || h.Since == nil || !h.Since.Equal(since) || h.TaskID != "t1" {
		t.Errorf("holder %+v", h)
	}
}

// TestExitPrintsOnce: the library's "dream: " prefix is printed once; under
// --json stdout is the error object; help is success; a reported failure
// is not printed again in text mode.
func TestExitPrintsOnce(t *testing.T) {
	run := func(jsonOut bool, err error) (int, string, string) {
		var out, errb bytes.Buffer
		a := &app{stdout: &out, stderr: &errb, jsonOut: jsonOut}
		return a.exit(err), out.String(), errb.String()
	}
	code, out, errText := run(false, fmt.Errorf("dream: %w", fmt.Errorf("undo x: dream: conflict")))
	if code != exitFailed || out != "" || errText != "dream: undo x: conflict\n" {
		t.Errorf("text: %d %q %q", code, out, errText)
	}
	code, out, errText = run(true, usagef("unknown command %q", "stauts"))
	var v struct {
		Error cliError `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitUsage || v.Error.Code != codeUsage || v.Error.ExitCode != exitUsage || !strings.Contains(errText, "stauts") {
		t.Errorf("json: %d %q %q (%v)", code, out, errText, err)
	}
	if code, out, errText = run(false, flag.ErrHelp); code != exitOK || out+errText != "" {
		t.Errorf("help: %d %q %q", code, out, errText)
	}
	if code, out, errText = run(false, reported(exitFailed, errors.New("timed out"))); code != exitFailed || out+errText != "" {
		t.Errorf("reported: %d %q %q", code, out, errText)
	}
	if code, out, errText = run(true, reported(exitFailed, errors.New("timed out"))); code != exitFailed || out != "" || errText != "dream: timed out\n" {
		t.Errorf("reported json: %d %q %q", code, out, errText)
	}
}

// TestLockHeldHint: the hint fits the holder: a local dream can be killed,
// another machine's waited for, an unknown holder explained.
func TestLockHeldHint(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 12, 30, 0, time.UTC)
	since := now.Add(-12*time.Minute - 30*time.Second)
	local, _ := os.Hostname()
	for _, tt := range []struct {
		h    dream.LockHeldError
		want string
	}{
		{dream.LockHeldError{LockHolder: dream.LockHolder{PID: 42, Host: local, TaskID: "t1", Since: &since}}, "(12m30s ago); wait for it to finish, or stop it with: dream kill t1"},
		{dream.LockHeldError{LockHolder: dream.LockHolder{PID: 42, TaskID: "t1", Since: &since}}, "dream kill t1"},
		{dream.LockHeldError{LockHolder: dream.LockHolder{PID: 42, Host: "elsewhere-" + local, TaskID: "t1", Since: &since}}, "the dream runs on elsewhere-"},
		{dream.LockHeldError{LockHolder: dream.LockHolder{PID: 42}}, "another dream or agent is consolidating this memory"},
	} {
		if got := lockHeldHint(&tt.h, now, nil); !strings.Contains(got, tt.want) {
			t.Errorf("hint for %+v = %q, want %q", tt.h, got, tt.want)
		}
	}
}
