package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/settings"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm"
)

// memoryIndex and topic are what a real agent's memory looks like: an index
// of pointers, topic files with nested headings, a numbered procedure,
// code, a quote, Chinese, and a rule beside a pointer.
const memoryIndex = "# Memory\n\n- [Build](build.md) — how the project builds and ships\n- [用户偏好](prefs.md) — 用户的编码习惯\n"

const topicBuild = "---\nname: build\ndescription: how the project builds and ships\ntype: project\n---\n\n# Build\n\n## Release\n\n1. Run `make test`.\n2. Tag the commit: `git tag v1.2.3`.\n3. Push the tag; CI publishes.\n\n```sh\nmake release VERSION=1.2.3\n```\n\n> Never publish from a dirty tree. — the maintainer\n\n- Always run the linters before a release; see [lint notes](lint.md).\n"

const topicPrefs = "---\nname: prefs\ndescription: 用户的编码习惯\ntype: user\n---\n\n# 偏好\n\n- 用户喜欢用 tab 缩进 Go 代码。\n- The user reviews diffs before every commit.\n"

type project struct{ mem, sessions string }

func newProject(t *testing.T, root, name string) project {
	t.Helper()
	p := project{mem: filepath.Join(root, name, "memory"), sessions: filepath.Join(root, name, "sessions")}
	writeFile(t, filepath.Join(p.mem, "MEMORY.md"), memoryIndex)
	writeFile(t, filepath.Join(p.mem, "build.md"), topicBuild)
	writeFile(t, filepath.Join(p.mem, "prefs.md"), topicPrefs)
	if err := os.MkdirAll(p.sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// transcriptLine is one line in Claude Code's transcript shape.
func transcriptLine(i int) string {
	return fmt.Sprintf(`{"parentUuid":null,"cwd":"/home/u/app","sessionId":"s%d","type":"user","message":{"role":"user","content":"第 %d 步: run the tests"}}`+"\n", i, i)
}

// touchSessions writes n transcripts into p's sessions dir.
func touchSessions(t *testing.T, p project, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		writeFile(t, filepath.Join(p.sessions, fmt.Sprintf("session-%d.jsonl", i)), transcriptLine(i))
	}
}

// recorder is a dream.Runner that measures concurrency, holds each dream
// for a while, and makes a real change in the staging copy.
type recorder struct {
	hold time.Duration

	mu      sync.Mutex
	cur     map[string]int
	maxPer  map[string]int
	count   map[string]int
	running int
	maxAll  int
	started chan string
	// during, if set, is called at the start and the end of each dream's
	// hold with the real memory dir.
	during func(mem string)
}

func newRecorder(hold time.Duration) *recorder {
	return &recorder{hold: hold, cur: map[string]int{}, maxPer: map[string]int{}, count: map[string]int{}, started: make(chan string, 100)}
}

func (r *recorder) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	key := job.MemoryDisplayDir
	r.mu.Lock()
	r.cur[key]++
	r.count[key]++
	r.running++
	r.maxPer[key] = max(r.maxPer[key], r.cur[key])
	r.maxAll = max(r.maxAll, r.running)
	during := r.during
	r.mu.Unlock()
	if during != nil {
		during(key)
		defer during(key)
	}
	defer func() {
		r.mu.Lock()
		r.cur[key]--
		r.running--
		r.mu.Unlock()
	}()
	select {
	case r.started <- key:
	default:
	}
	select {
	case <-time.After(r.hold):
	case <-ctx.Done():
		return dream.Outcome{}, context.Cause(ctx)
	}
	f, err := os.OpenFile(filepath.Join(job.MemoryDir, "build.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return dream.Outcome{}, err
	}
	_, err = f.WriteString("- Releases are cut on Tuesdays (confirmed 2026-11-30).\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return dream.Outcome{}, err
	}
	job.Progress(dream.Progress{Kind: dream.ProgressFileTouched, Path: "build.md"})
	return dream.Outcome{Turns: 2, ToolCalls: 1, FilesTouched: []string{"build.md"},
		Usage: llm.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadInputTokens: 3000, CacheCreationInputTokens: 500}}, nil
}

func (r *recorder) snapshot() (count, maxPer map[string]int, maxAll int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	count, maxPer = map[string]int{}, map[string]int{}
	for k, v := range r.count {
		count[k] = v
	}
	for k, v := range r.maxPer {
		maxPer[k] = v
	}
	return count, maxPer, r.maxAll
}

// harness runs a daemon in-process against real directories, a real
// watcher and real Dreamers; only the model is replaced by the recorder.
type harness struct {
	t      *testing.T
	d      *Daemon
	cancel context.CancelFunc
	done   chan error
	state  string
	rec    *recorder
}

func dreamSettings() settings.Dream {
	s := settings.DreamDefaults()
	s.MinSessions = 2
	s.Timeout = time.Minute
	return s
}

func startDaemon(t *testing.T, root string, rec *recorder, k int, idle time.Duration, projects []project, mutate func(*Config)) *harness {
	t.Helper()
	return startDaemonLogging(t, root, rec, k, idle, projects, mutate, nil)
}

// startDaemonLogging is startDaemon with the daemon's logs sent to log.
func startDaemonLogging(t *testing.T, root string, rec *recorder, k int, idle time.Duration, projects []project, mutate func(*Config), log *slog.Logger) *harness {
	t.Helper()
	state := filepath.Join(root, "state")
	cfg := Config{
		Settings: Settings{Idle: idle, MaxConcurrent: k, Rescan: time.Hour, Detect: false},
		Dream:    dreamSettings(),
		StateDir: state,
		Home:     filepath.Join(root, "home"),
		Env:      func(string) (string, bool) { return "", false },
		Runner:   rec,
		Provider: "test",
	}
	for _, p := range projects {
		cfg.Projects = append(cfg.Projects, ProjectEntry{MemoryDir: p.mem, SessionsDir: p.sessions})
	}
	if mutate != nil {
		mutate(&cfg)
	}
	scanned := make(chan struct{}, 16)
	d, err := New(Options{
		Load:          func() (Config, error) { return cfg, nil },
		Logger:        log,
		ShutdownGrace: 10 * time.Second,
		OnScanned: func() {
			select {
			case scanned <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, d: d, cancel: cancel, done: make(chan error, 1), state: state, rec: rec}
	go func() { h.done <- d.Run(ctx) }()
	select {
	case <-scanned:
	case <-time.After(10 * time.Second):
		t.Fatal("the first scan did not finish")
	}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
		h.done <- nil
	case <-time.After(15 * time.Second):
		h.t.Error("the daemon did not stop within 15 s")
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// walksDone is true when every project had at least n funnel walks and
// the daemon is quiet.
func (h *harness) walksDone(n int) bool {
	s := h.d.Status()
	if s.Running > 0 || s.Queued > 0 {
		return false
	}
	for _, p := range s.Projects {
		if p.Walks < n || p.State != stateIdle {
			return false
		}
	}
	return len(s.Projects) > 0
}

func TestThreeProjectsOneDreamEach(t *testing.T) {
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) {
			root := t.TempDir()
			ps := []project{newProject(t, root, "alpha"), newProject(t, root, "beta"), newProject(t, root, "gamma")}
			rec := newRecorder(300 * time.Millisecond)
			h := startDaemon(t, root, rec, k, 300*time.Millisecond, ps, nil)
			if got := len(h.d.Status().Projects); got != 3 {
				t.Fatalf("watching %d memory dirs, want 3", got)
			}
			for _, p := range ps {
				touchSessions(t, p, 3)
			}
			waitUntil(t, 60*time.Second, "one funnel walk per memory dir", func() bool { return h.walksDone(1) })

			// More activity after the dreams: the funnel is walked again
			// once idle, and the time gate (just consolidated) closes it.
			for _, p := range ps {
				writeFile(t, filepath.Join(p.sessions, "session-9.jsonl"), transcriptLine(9))
			}
			waitUntil(t, 60*time.Second, "a second walk per memory dir", func() bool { return h.walksDone(2) })

			count, maxPer, maxAll := rec.snapshot()
			for _, p := range ps {
				if count[p.mem] != 1 {
					t.Errorf("%s: %d dreams, want 1", p.mem, count[p.mem])
				}
				if maxPer[p.mem] > 1 {
					t.Errorf("%s: %d dreams at once on one memory dir", p.mem, maxPer[p.mem])
				}
				b, err := os.ReadFile(filepath.Join(p.mem, "build.md"))
				if err != nil || !strings.Contains(string(b), "Releases are cut on Tuesdays") {
					t.Errorf("%s: the dream did not land: %v", p.mem, err)
				}
			}
			if maxAll > k {
				t.Errorf("%d dreams ran at once, K is %d", maxAll, k)
			}
			st := h.d.Status()
			for _, p := range st.Projects {
				if p.LastGate != dream.GateTime {
					t.Errorf("%s: second walk closed at %q, want the time gate", p.MemoryDir, p.LastGate)
				}
				if p.LastDream == nil || p.LastDream.Status != dream.StatusCompleted {
					t.Errorf("%s: last dream %+v, want completed", p.MemoryDir, p.LastDream)
				}
			}
			t.Logf("K=%d: dreams %v, most at once %d", k, count, maxAll)
		})
	}
}

func TestEventStormOneDreamPerDir(t *testing.T) {
	root := t.TempDir()
	ps := []project{newProject(t, root, "alpha"), newProject(t, root, "beta")}
	rec := newRecorder(100 * time.Millisecond)
	h := startDaemon(t, root, rec, 2, 300*time.Millisecond, ps, nil)
	files := make([]*os.File, 0, 8)
	for _, p := range ps {
		for i := 0; i < 4; i++ {
			f, err := os.OpenFile(filepath.Join(p.sessions, fmt.Sprintf("storm-%d.jsonl", i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	const writes = 10000
	start := time.Now()
	for i := 0; i < writes; i++ {
		if _, err := files[i%len(files)].WriteString(transcriptLine(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		f.Close()
	}
	t.Logf("%d writes in %s", writes, time.Since(start).Round(time.Millisecond))
	waitUntil(t, 60*time.Second, "the storm's funnel walks", func() bool { return h.walksDone(1) })
	// Let any straggling timer fire; nothing more may start.
	time.Sleep(time.Second)
	waitUntil(t, 60*time.Second, "quiet", func() bool { return h.walksDone(1) })
	count, maxPer, _ := rec.snapshot()
	for _, p := range ps {
		if count[p.mem] != 1 || maxPer[p.mem] != 1 {
			t.Errorf("%s: %d dreams (at most %d at once) after %d writes, want exactly 1", p.mem, count[p.mem], maxPer[p.mem], writes)
		}
	}
	events := testCounter(t, h.d, "dream_fs_events_total", nil)
	if events < writes/10 {
		t.Errorf("only %v file-system events counted for %d writes", events, writes)
	}
	t.Logf("%v events, %d funnel walks", events, h.d.Status().Projects[0].Walks)
}

func TestProjectDirDisappears(t *testing.T) {
	root := t.TempDir()
	doomed, kept := newProject(t, root, "doomed"), newProject(t, root, "kept")
	rec := newRecorder(50 * time.Millisecond)
	h := startDaemon(t, root, rec, 1, 300*time.Millisecond, []project{doomed, kept}, nil)
	// Activity, then the whole project goes before the idle window ends.
	touchSessions(t, doomed, 3)
	time.Sleep(50 * time.Millisecond)
	if err := os.RemoveAll(filepath.Dir(doomed.mem)); err != nil {
		t.Fatal(err)
	}
	touchSessions(t, kept, 3)
	waitUntil(t, 60*time.Second, "the remaining project's dream", func() bool {
		count, _, _ := rec.snapshot()
		return count[kept.mem] == 1
	})
	// The rescan the removal asked for forgets the gone project.
	waitUntil(t, 30*time.Second, "the gone project to be forgotten", func() bool {
		s := h.d.Status()
		return len(s.Projects) == 1 && s.Projects[0].MemoryDir == kept.mem && s.Running == 0
	})
	count, _, _ := rec.snapshot()
	if count[doomed.mem] != 0 {
		t.Errorf("dreamt %d times for a deleted project", count[doomed.mem])
	}
	// It comes back: a rescan picks it up again.
	doomed = newProject(t, root, "doomed")
	h.d.rescan()
	if got := len(h.d.Status().Projects); got != 2 {
		t.Errorf("after the project came back: watching %d, want 2", got)
	}
}

func TestShutdownKillsRunningDream(t *testing.T) {
	root := t.TempDir()
	p := newProject(t, root, "alpha")
	before := readTree(t, p.mem)
	rec := newRecorder(time.Hour)
	h := startDaemon(t, root, rec, 1, 200*time.Millisecond, []project{p}, nil)
	touchSessions(t, p, 3)
	select {
	case <-rec.started:
	case <-time.After(60 * time.Second):
		t.Fatal("no dream started")
	}
	var taskID string
	waitUntil(t, 10*time.Second, "the running task", func() bool {
		ts, err := task.List(h.state)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ts {
			if e.Status == task.StatusRunning {
				taskID = e.ID
			}
		}
		return taskID != ""
	})
	start := time.Now()
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		h.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon did not exit within 5 s of the cancel")
	}
	t.Logf("exited %s after the cancel", time.Since(start).Round(time.Millisecond))
	e, err := task.Lookup(h.state, taskID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != task.StatusKilled {
		t.Errorf("task %s is %s (%s), want killed", e.ID, e.Status, e.Error)
	}
	if after := readTree(t, p.mem); after != before {
		t.Errorf("a killed dream changed the memory:\nbefore %s\nafter  %s", before, after)
	}
	if _, err := os.Stat(filepath.Join(p.mem, ".consolidate-lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock was not rolled back (it did not exist before): %v", err)
	}
	if v := testCounter(t, h.d, "dream_dreams_killed_total", map[string]string{"host": "custom"}); v != 1 {
		t.Errorf("dreams_killed_total = %v, want 1", v)
	}
}

// readTree returns every file of dir and its content, the lock excluded.
func readTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || de.Name() == ".consolidate-lock" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %q\n", strings.TrimPrefix(path, dir), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReloadAppliesNewProjects(t *testing.T) {
	root := t.TempDir()
	a, b := newProject(t, root, "alpha"), newProject(t, root, "beta")
	state := filepath.Join(root, "state")
	projects := []ProjectEntry{{MemoryDir: a.mem, SessionsDir: a.sessions}}
	var mu sync.Mutex
	reload := make(chan struct{})
	d, err := New(Options{Reload: reload, Load: func() (Config, error) {
		mu.Lock()
		defer mu.Unlock()
		return Config{Settings: Settings{Idle: time.Second, MaxConcurrent: 1, Rescan: time.Hour, Projects: append([]ProjectEntry{}, projects...)},
			Dream: dreamSettings(), StateDir: state, Runner: newRecorder(0)}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, 10*time.Second, "alpha watched", func() bool { return len(d.Status().Projects) == 1 })
	mu.Lock()
	projects = append(projects, ProjectEntry{MemoryDir: b.mem, SessionsDir: b.sessions})
	mu.Unlock()
	reload <- struct{}{}
	waitUntil(t, 10*time.Second, "beta watched after the reload", func() bool { return len(d.Status().Projects) == 2 })
}
