//go:build unix

package task

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/raceenv"
	"github.com/dreamkit/dream/llm"
)

const (
	helperEnv = "DREAM_TASK_TEST_HELPER"
	envState  = "DREAM_TASK_TEST_STATE"
)

func TestMain(m *testing.M) {
	raceenv.Setenv() // the helper processes inherit it: no second at each exit
	switch mode := os.Getenv(helperEnv); mode {
	case "":
		os.Exit(m.Run())
	case "start-exit", "start-wait-kill":
		os.Exit(helperStart(mode == "start-wait-kill"))
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		os.Exit(2)
	}
}

// helperStart registers a task, prints its id, and either exits at once
// without finishing (a crash) or waits for a kill request and finishes killed.
func helperStart(waitKill bool) int {
	r, err := Open(os.Getenv(envState))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	h, err := r.Start(Entry{MemoryDir: "mem"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(h.ID())
	if !waitKill {
		return 0
	}
	select {
	case <-h.KillRequested():
		if err := h.Finish(StatusKilled, "killed by request"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return 0
	case <-time.After(20 * time.Second):
		return 3
	}
}

// startChild runs a helper and returns it with the task id it printed.
func startChild(t *testing.T, mode, stateDir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, envState+"="+stateDir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child printed no id: %v", err)
	}
	return cmd, strings.TrimSpace(line)
}

func openReg(t *testing.T) *Registry {
	t.Helper()
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r.pollInterval = 10 * time.Millisecond
	r.flushEvery = 0 // write through: these tests read the disk after each call
	return r
}

func mustStart(t *testing.T, r *Registry, e Entry) *Handle {
	t.Helper()
	h, err := r.Start(e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Finish(StatusFailed, "test cleanup") })
	return h
}

func mustGet(t *testing.T, r *Registry, id string) Entry {
	t.Helper()
	e, err := r.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNewID(t *testing.T) {
	at := time.Date(2026, 11, 30, 19, 19, 32, 0, time.FixedZone("CST", 8*3600))
	id := NewID(at)
	if !strings.HasPrefix(id, "20261130-111932-") || len(id) != len("20261130-111932-3f9a") {
		t.Errorf("NewID = %q", id)
	}
	if err := validID(id); err != nil {
		t.Error(err)
	}
	seen := map[string]bool{}
	for range 50 {
		seen[NewID(at)] = true
	}
	if len(seen) < 45 {
		t.Errorf("only %d distinct ids of 50 in one second", len(seen))
	}
	if a, b := NewID(at), NewID(at.Add(time.Second)); a[:15] >= b[:15] {
		t.Errorf("ids do not sort by time: %q, %q", a, b)
	}
}

func TestValidID(t *testing.T) {
	for _, id := range []string{"", ".hidden", "a/b", "../x", "a b", strings.Repeat("x", 65), "é"} {
		if validID(id) == nil {
			t.Errorf("validID(%q) accepted", id)
		}
	}
	if _, err := openReg(t).Start(Entry{ID: "../escape"}); err == nil {
		t.Error("Start accepted a path-like id")
	}
}

func TestStartDefaults(t *testing.T) {
	r := openReg(t)
	before := time.Now()
	h := mustStart(t, r, Entry{MemoryDir: "/m", Status: StatusCompleted, Phase: PhaseUpdating, Error: "x"})
	e := mustGet(t, r, h.ID())
	if e.Status != StatusRunning || e.Phase != PhaseStarting || e.Error != "" || e.EndedAt != nil {
		t.Errorf("start state = %+v", e)
	}
	if e.PID != os.Getpid() || e.StartedAt.Before(before.Add(-time.Second)) || e.MemoryDir != "/m" {
		t.Errorf("defaults = %+v", e)
	}
	if e.Turns == nil || e.FilesTouched == nil {
		t.Error("slices should be [] not null on disk")
	}
	if _, err := r.Start(Entry{ID: h.ID()}); !errors.Is(err, os.ErrExist) {
		t.Errorf("Start with an existing id: %v", err)
	}
}

func TestFinishTransitions(t *testing.T) {
	for _, st := range []Status{StatusCompleted, StatusFailed, StatusKilled} {
		t.Run(string(st), func(t *testing.T) {
			r := openReg(t)
			h := mustStart(t, r, Entry{})
			if err := h.Finish(st, "why"); err != nil {
				t.Fatal(err)
			}
			e := mustGet(t, r, h.ID())
			if e.Status != st || e.Error != "why" || e.EndedAt == nil {
				t.Errorf("after Finish(%s) = %+v", st, e)
			}
			// A second Finish with anything else is a no-op.
			b1, _ := os.ReadFile(r.entryPath(h.ID()))
			if err := h.Finish(StatusCompleted, "again"); err != nil {
				t.Errorf("second Finish: %v", err)
			}
			b2, _ := os.ReadFile(r.entryPath(h.ID()))
			if string(b1) != string(b2) {
				t.Errorf("second Finish rewrote the entry:\n%s\n%s", b1, b2)
			}
			if err := h.AddToolCall(); !errors.Is(err, ErrFinished) {
				t.Errorf("Update after Finish: %v", err)
			}
		})
	}
	h := mustStart(t, openReg(t), Entry{})
	if err := h.Finish(StatusRunning, ""); err == nil {
		t.Error("Finish(running) accepted")
	}
}

func TestUpdateInvariants(t *testing.T) {
	r := openReg(t)
	h := mustStart(t, r, Entry{})
	if err := h.Update(func(e *Entry) {
		e.Status = StatusCompleted
		e.ID = "other"
		e.PID = 1
		e.Error = "no"
		e.Phase = "bogus"
	}); err != nil {
		t.Fatal(err)
	}
	e := mustGet(t, r, h.ID())
	if e.Status != StatusRunning || e.ID != h.ID() || e.PID != os.Getpid() || e.Error != "" || e.Phase != PhaseStarting {
		t.Errorf("Update changed protected fields: %+v", e)
	}
	if err := h.AddFileTouched("topic.md"); err != nil {
		t.Fatal(err)
	}
	if err := h.AddFileTouched("topic.md"); err != nil {
		t.Fatal(err)
	}
	if err := h.AddFileTouched(""); err == nil {
		t.Error("empty touched path accepted")
	}
	if err := h.Update(func(e *Entry) { e.Phase = PhaseStarting; e.FilesTouched = nil }); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, r, h.ID())
	if e.Phase != PhaseUpdating {
		t.Errorf("phase went back to %q", e.Phase)
	}
	for i := range MaxTurns + 5 {
		if err := h.AddTurn(fmt.Sprintf("turn %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.AddToolCall(); err != nil {
		t.Fatal(err)
	}
	u := llm.Usage{InputTokens: 1, OutputTokens: 2, CacheReadInputTokens: 3, CacheCreationInputTokens: 4}
	if err := h.SetUsage(u); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, r, h.ID())
	if len(e.Turns) != MaxTurns || e.Turns[0] != "turn 5" || e.Turns[MaxTurns-1] != "turn 34" {
		t.Errorf("turns = %d, first %q", len(e.Turns), e.Turns[0])
	}
	if e.ToolCalls != 1 || e.Usage != u {
		t.Errorf("counters = %d, %+v", e.ToolCalls, e.Usage)
	}
	if !reflect.DeepEqual(h.Entry(), e) {
		t.Errorf("handle view differs from disk:\n%+v\n%+v", h.Entry(), e)
	}
}

func TestStartWithFilesIsUpdating(t *testing.T) {
	r := openReg(t)
	h := mustStart(t, r, Entry{FilesTouched: []string{"a.md"}})
	if e := mustGet(t, r, h.ID()); e.Phase != PhaseUpdating {
		t.Errorf("phase = %q", e.Phase)
	}
}

// TestUpdateWritesOnlyOnChange: a no-op update, a duplicate file and an
// empty turn leave the file untouched (content and mtime).
func TestUpdateWritesOnlyOnChange(t *testing.T) {
	r := openReg(t)
	h := mustStart(t, r, Entry{})
	if err := h.AddFileTouched("a.md"); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	path := r.entryPath(h.ID())
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	noops := []func() error{
		func() error { return h.Update(func(*Entry) {}) },
		func() error { return h.Update(func(e *Entry) { e.Turns = nil; e.Phase = PhaseStarting }) },
		func() error { return h.AddFileTouched("a.md") },
		func() error { return h.AddTurn("") },
		func() error { return h.SetUsage(llm.Usage{}) },
	}
	for i, op := range noops {
		if err := op(); err != nil {
			t.Fatalf("no-op %d: %v", i, err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(path)
		if !fi.ModTime().Equal(old) || string(after) != string(before) {
			t.Errorf("no-op %d rewrote the entry", i)
		}
	}
	if err := h.AddToolCall(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.ModTime().Equal(old) {
		t.Error("a real change was not written")
	}
}

func TestKill(t *testing.T) {
	r := openReg(t)
	other, err := Open(r.dir[:len(r.dir)-len("/tasks")])
	if err != nil {
		t.Fatal(err)
	}
	h := mustStart(t, r, Entry{})
	select {
	case <-h.KillRequested():
		t.Fatal("kill requested before Kill")
	case <-time.After(30 * time.Millisecond):
	}
	e, err := other.Kill(h.ID()[:len(h.ID())-1]) // by prefix, from another Registry
	if err != nil || e.ID != h.ID() || e.Status != StatusRunning {
		t.Fatalf("Kill = %+v, %v", e, err)
	}
	select {
	case <-h.KillRequested():
	case <-time.After(5 * time.Second):
		t.Fatal("KillRequested did not fire within 5s")
	}
	if err := h.Finish(StatusKilled, "killed"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.markerPath(h.ID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kill marker left after Finish: %v", err)
	}
	// Killing a finished task changes nothing.
	before, _ := os.ReadFile(r.entryPath(h.ID()))
	e, err = other.Kill(h.ID())
	if !errors.Is(err, ErrFinished) || e.Status != StatusKilled {
		t.Errorf("Kill of finished = %+v, %v", e, err)
	}
	after, _ := os.ReadFile(r.entryPath(h.ID()))
	if string(before) != string(after) {
		t.Error("Kill of a finished task rewrote it")
	}
	if _, err := os.Stat(r.markerPath(h.ID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Kill of a finished task left a marker: %v", err)
	}
}

func TestKillAcrossProcesses(t *testing.T) {
	state := t.TempDir()
	child, id := startChild(t, "start-wait-kill", state)
	r, err := Open(state)
	if err != nil {
		t.Fatal(err)
	}
	if e := mustGet(t, r, id); e.Status != StatusRunning || e.PID != child.Process.Pid {
		t.Fatalf("child entry = %+v", e)
	}
	if _, err := r.Kill(id); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("child did not finish killed: %v", err)
	}
	if e := mustGet(t, r, id); e.Status != StatusKilled || e.Error != "killed by request" {
		t.Errorf("after kill = %+v", e)
	}
}

func TestDeadProcessMarkedFailed(t *testing.T) {
	state := t.TempDir()
	child, id := startChild(t, "start-exit", state)
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(state)
	if err != nil {
		t.Fatal(err)
	}
	mine := mustStart(t, r, Entry{})
	list, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != mine.ID() || list[0].Status != StatusRunning {
		t.Fatalf("list = %+v", list)
	}
	want := fmt.Sprintf("process %d died", child.Process.Pid)
	if e := list[1]; e.ID != id || e.Status != StatusFailed || e.Error != want || e.EndedAt == nil {
		t.Errorf("dead entry = %+v", e)
	}
	// The repair is persisted.
	b, _ := os.ReadFile(r.entryPath(id))
	var onDisk Entry
	if err := json.Unmarshal(b, &onDisk); err != nil || onDisk.Status != StatusFailed {
		t.Errorf("repair not written: %s", b)
	}
}

func TestListOrderGetAndPrune(t *testing.T) {
	r := openReg(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5 {
		h := mustStart(t, r, Entry{ID: fmt.Sprintf("2026010%d-000000-abcd", i+1), StartedAt: base.Add(time.Duration(i) * time.Hour)})
		ids = append(ids, h.ID())
		if i != 1 && i != 3 {
			if err := h.Finish(StatusCompleted, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A corrupt file and a stray temp file are skipped.
	os.WriteFile(r.entryPath("broken"), []byte("{not json"), 0o600)
	os.WriteFile(r.dir+"/.dream-tmp-task-x", []byte("{}"), 0o600)
	list, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.ID[7:8])
	}
	if want := []string{"4", "2", "5", "3", "1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v (running first, newest first)", got, want)
	}
	tests := []struct {
		q       string
		want    string
		wantErr error
	}{
		{ids[2], ids[2], nil},
		{"20260103", ids[2], nil},
		{"2026010", "", ErrAmbiguous},
		{"nope", "", ErrNotFound},
		{"", "", ErrNotFound},
	}
	for _, tt := range tests {
		e, err := r.Get(tt.q)
		if !errors.Is(err, tt.wantErr) || e.ID != tt.want {
			t.Errorf("Get(%q) = %q, %v; want %q, %v", tt.q, e.ID, err, tt.want, tt.wantErr)
		}
	}
	if err := r.Prune(-1); err == nil {
		t.Error("Prune(-1) accepted")
	}
	if err := r.Prune(1); err != nil {
		t.Fatal(err)
	}
	list, _ = r.List()
	got = nil
	for _, e := range list {
		got = append(got, e.ID[7:8])
	}
	if want := []string{"4", "2", "5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after Prune(1) = %v, want %v", got, want)
	}
}

func TestOpenEmpty(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\") accepted")
	}
}
