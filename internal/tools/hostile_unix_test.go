//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a real named pipe and, at cleanup, opens its write end once
// so that any reader the code under test left blocked in open(2) is released
// (on the code before issue 9 it would stay blocked for ever).
func mkfifo(t *testing.T, path string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})
}

// callWithin runs one tool call and fails the test if it does not return
// within d: a tool that blocks is the defect, whatever it returns.
func (f *fixture) callWithin(t *testing.T, d time.Duration, name string, input any) (Result, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	tl := f.tool(t, name)
	type out struct {
		res Result
		err error
	}
	ch := make(chan out, 1)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	go func() {
		if err := tl.Validate(raw); err != nil {
			ch <- out{err: err}
			return
		}
		res, err := tl.Execute(ctx, raw)
		ch <- out{res, err}
	}()
	select {
	case o := <-ch:
		return o.res, o.err
	case <-time.After(d + 2*time.Second):
		t.Fatalf("%s %s did not return within %v (blocked)", name, raw, d)
		return Result{}, nil
	}
}

// TestFIFOsNeverBlock is issue 9 class 4: a FIFO in the repository, the
// sessions dir or the memory dir, read, grepped, globbed, listed, written or
// edited, must give a prompt error result (or be skipped by a walk), never a
// call blocked in open(2) until the dream's deadline.
func TestFIFOsNeverBlock(t *testing.T) {
	f := newFixture(t, Limits{})
	writeFile(t, filepath.Join(f.repo, "main.go"), "package main\n// needle\n")
	writeFile(t, filepath.Join(f.sessions, "a.jsonl"), `{"text":"needle"}`+"\n")
	writeFile(t, filepath.Join(f.staging, "MEMORY.md"), "- [Build](build.md) — needle\n")
	mkfifo(t, filepath.Join(f.repo, "pipe.go"))
	mkfifo(t, filepath.Join(f.repo, "sub", ".gitignore")) // loaded by every walk of sub
	writeFile(t, filepath.Join(f.repo, "sub", "x.go"), "needle\n")
	mkfifo(t, filepath.Join(f.sessions, "live.jsonl"))
	mkfifo(t, filepath.Join(f.staging, "notes.md"))
	if err := os.Symlink("pipe.go", filepath.Join(f.repo, "link.go")); err != nil {
		t.Fatal(err)
	}
	const d = 3 * time.Second
	mustFail := []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"read", map[string]any{"file_path": filepath.Join(f.repo, "pipe.go")}, "named pipe"},
		{"read", map[string]any{"file_path": "link.go"}, "named pipe"},
		{"read", map[string]any{"file_path": filepath.Join(f.sessions, "live.jsonl")}, "named pipe"},
		{"read", map[string]any{"file_path": filepath.Join(f.display, "notes.md")}, "named pipe"},
		{"grep", map[string]any{"pattern": "needle", "path": filepath.Join(f.repo, "pipe.go")}, "named pipe"},
		{"grep", map[string]any{"pattern": "needle", "path": filepath.Join(f.sessions, "live.jsonl")}, "named pipe"},
		{"write", map[string]any{"file_path": "notes.md", "content": "# Notes\n"}, "not a regular file"},
		{"edit", map[string]any{"file_path": "notes.md", "old_string": "a", "new_string": "b"}, "not a regular file"},
	}
	for _, c := range mustFail {
		_, err := f.callWithin(t, d, c.tool, c.input)
		wantErr(t, err, c.want)
	}
	// Walks skip the FIFOs and still find the regular files.
	res, err := f.callWithin(t, d, "grep", map[string]any{"pattern": "needle"})
	if err != nil || !strings.Contains(res.Content, "main.go:2") || !strings.Contains(res.Content, "x.go:1") {
		t.Errorf("grep over the repository: %v\n%s", err, res.Content)
	}
	res, err = f.callWithin(t, d, "grep", map[string]any{"pattern": "needle", "path": f.sessions})
	if err != nil || !strings.Contains(res.Content, "a.jsonl:1") {
		t.Errorf("grep over the sessions: %v\n%s", err, res.Content)
	}
	res, err = f.callWithin(t, d, "grep", map[string]any{"pattern": "needle", "path": f.display, "output_mode": "count"})
	if err != nil || !strings.Contains(res.Content, "MEMORY.md:1") {
		t.Errorf("grep over the memory: %v\n%s", err, res.Content)
	}
	res, err = f.callWithin(t, d, "glob", map[string]any{"pattern": "**/*"})
	if err != nil || strings.Contains(res.Content, "pipe.go") || !strings.Contains(res.Content, "main.go") {
		t.Errorf("glob: %v\n%s", err, res.Content)
	}
	res, err = f.callWithin(t, d, "ls", map[string]any{"path": f.repo})
	if err != nil || !strings.Contains(res.Content, "pipe.go (named pipe, not readable)") {
		t.Errorf("ls: %v\n%s", err, res.Content)
	}
	// A new file beside the FIFO is still written.
	if _, err := f.callWithin(t, d, "write", map[string]any{"file_path": "build.md", "content": "# Build\n\nRun `make`.\n"}); err != nil {
		t.Errorf("write beside a FIFO: %v", err)
	}
}

// TestWalkHonoursContext: a walk stops at the first entry after the
// dream's context ends, not a few hundred entries later.
func TestWalkHonoursContext(t *testing.T) {
	f := newFixture(t, Limits{})
	for i := range 50 {
		writeFile(t, filepath.Join(f.repo, "d", strings.Repeat("x", i+1)+".go"), "needle\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	raw, _ := json.Marshal(map[string]any{"pattern": "**/*.go"})
	if _, err := f.tool(t, "glob").Execute(ctx, raw); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("glob with a cancelled context: %v, want context canceled", err)
	}
	raw, _ = json.Marshal(map[string]any{"pattern": "needle"})
	if _, err := f.tool(t, "grep").Execute(ctx, raw); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("grep with a cancelled context: %v, want context canceled", err)
	}
}
