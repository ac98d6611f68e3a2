package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm/llmtest"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemonFile writes the world's daemon.toml and returns its path.
func (w *world) daemonFile(content string) string {
	w.t.Helper()
	p := filepath.Join(w.root, "home", ".config", "dream", "daemon.toml")
	w.write(filepath.Dir(p), filepath.Base(p), content)
	return p
}

// startDaemon runs `dream daemon` with stderr captured line by line.
func (w *world) startDaemon(extraEnv []string, args ...string) (*exec.Cmd, *syncBuffer) {
	w.t.Helper()
	cmd := exec.Command(binPath, append([]string{"daemon"}, args...)...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Dir = w.repo
	var errb syncBuffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &errb
}

// logLines decodes the daemon's JSON log (stderr is not a terminal).
func logLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("log line is not JSON: %q", sc.Text())
			continue
		}
		lines = append(lines, m)
	}
	return lines
}

func findLog(t *testing.T, out, msg string) map[string]any {
	for _, l := range logLines(t, out) {
		if l["msg"] == msg {
			return l
		}
	}
	return nil
}

func TestDaemonSIGTERMMidDreamRollsBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	before := snapshot(t, w.mem)
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "new.md", "content": "---\nname: n\ndescription: d\ntype: project\n---\n\n- 新的事实。\n"}}}},
		llmtest.Turn{Delay: time.Minute, Text: "never reached"},
	)
	defer srv.Close()
	w.daemonFile(fmt.Sprintf("detect = false\n\n[[project]]\nmemory_dir = %q\nsessions_dir = %q\n", w.mem, w.sessions))
	cmd, logs := w.startDaemon(modelEnv("anthropic", srv.URL, false), "--idle", "300ms", "--state-dir", w.state, "--repo", w.repo)
	// The world's six transcripts are activity the first scan sees; once
	// they are idle the funnel opens (never consolidated) and a dream runs.
	waitFor(t, 60*time.Second, "the dream's second model turn", func() bool { return len(srv.Requests()) >= 2 })
	tasks := decodeJSON[[]struct{ ID, Status, Phase string }](t, w.dream(nil, "tasks", "--json", "--state-dir", w.state))
	var id string
	for _, e := range tasks {
		if e.Status == "running" {
			id = e.ID
		}
	}
	if id == "" {
		t.Fatalf("no running task: %+v\n%s", tasks, logs)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("daemon exit after SIGTERM: %v\n%s", err, logs)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the daemon did not exit within 5 s of SIGTERM\n%s", logs)
	}
	t.Logf("exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	if after := snapshot(t, w.mem); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("memory changed by a dream killed at shutdown:\n%v", after)
	}
	if _, err := os.Stat(filepath.Join(w.mem, ".consolidate-lock")); !os.IsNotExist(err) {
		t.Errorf("the lock was not rolled back: %v", err)
	}
	final := decodeJSON[[]struct{ ID, Status string }](t, w.dream(nil, "tasks", "--json", "--state-dir", w.state))
	for _, e := range final {
		if e.ID == id && e.Status != "killed" {
			t.Errorf("task %s is %s after shutdown, want killed", id, e.Status)
		}
	}
	if l := findLog(t, logs.String(), "dream finished"); l == nil || l["status"] != "killed" {
		t.Errorf("no 'dream finished' killed log line:\n%s", logs)
	}
	if findLog(t, logs.String(), "stopped") == nil {
		t.Errorf("no clean stop logged:\n%s", logs)
	}
}

func TestDaemonSIGHUPReloadsAndServesStatus(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	second := filepath.Join(w.root, "second")
	w.write(filepath.Join(second, "memory"), "MEMORY.md", "# Memory\n\n- [Ops](ops.md) — 运维\n")
	w.write(filepath.Join(second, "sessions"), "a.jsonl", "{}\n")
	w.daemonFile(fmt.Sprintf("detect = false\nlisten = \"127.0.0.1:0\"\n\n[[project]]\nmemory_dir = %q\nsessions_dir = %q\n", w.mem, w.sessions))
	cmd, logs := w.startDaemon([]string{"DREAM_PROVIDER=offline", "DREAM_MIN_HOURS=1000"}, "--state-dir", w.state)
	var addr string
	waitFor(t, 30*time.Second, "the listener", func() bool {
		if l := findLog(t, logs.String(), "listening"); l != nil {
			addr, _ = l["addr"].(string)
		}
		return addr != ""
	})
	status := func() map[string]any {
		resp, err := http.Get("http://" + addr + "/status")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	projects := func() int { p, _ := status()["projects"].([]any); return len(p) }
	waitFor(t, 30*time.Second, "one project", func() bool { return projects() == 1 })

	add := w.dream(nil, "daemon", "add", second, "--memory-dir", filepath.Join(second, "memory"), "--sessions-dir", filepath.Join(second, "sessions"))
	if add.code != 0 || !strings.Contains(add.stdout, "added") {
		t.Fatalf("daemon add:\n%s", add)
	}
	again := w.dream(nil, "daemon", "add", second, "--memory-dir", filepath.Join(second, "memory"), "--sessions-dir", filepath.Join(second, "sessions"))
	if again.code != 0 || !strings.Contains(again.stdout, "already") {
		t.Errorf("second daemon add:\n%s", again)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "two projects after SIGHUP", func() bool { return projects() == 2 })
	// The daemon logs the reload after it takes the new configuration,
	// which /status may already show: wait for the line, not a moment.
	waitFor(t, 30*time.Second, "the reload logged", func() bool { return findLog(t, logs.String(), "configuration reloaded") != nil })
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(body.String(), "dream_watched_memory_dirs 2") {
		t.Errorf("/metrics:\n%s", body)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGINT: %v", err)
	}
}

func TestDaemonRefusesNonLoopbackListen(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, addr := range []string{"0.0.0.0:9464", "[::]:9464", "192.168.1.5:9464"} {
		r := w.dream(nil, "daemon", "--listen", addr, "--no-detect", "--state-dir", w.state)
		if r.code != exitUsage || !strings.Contains(r.stderr, "loopback") {
			t.Errorf("--listen %s: exit %d\n%s", addr, r.code, r)
		}
	}
}

func TestDaemonInstallAndRemove(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, kind := range []string{"systemd", "launchd"} {
		r := w.dream(nil, "daemon", "install", "--kind", kind)
		if r.code != 0 {
			t.Fatalf("install %s:\n%s", kind, r)
		}
		var path string
		if kind == "systemd" {
			path = filepath.Join(w.root, "home", ".config", "systemd", "user", "dream.service")
			if !strings.Contains(r.stdout, "systemctl --user enable --now dream.service") {
				t.Errorf("install does not say how to enable:\n%s", r)
			}
		} else {
			path = filepath.Join(w.root, "home", "Library", "LaunchAgents", "dev.dreamkit.dream.plist")
			if !strings.Contains(r.stdout, "launchctl bootstrap") {
				t.Errorf("install does not say how to enable:\n%s", r)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if !strings.Contains(string(b), " daemon") && !strings.Contains(string(b), "<string>daemon</string>") {
			t.Errorf("%s unit does not run the daemon:\n%s", kind, b)
		}
		if again := w.dream(nil, "daemon", "install", "--kind", kind); !strings.Contains(again.stdout, "already up to date") {
			t.Errorf("second install:\n%s", again)
		}
		rm := w.dream(nil, "daemon", "install", "--kind", kind, "--remove")
		if rm.code != 0 || !strings.Contains(rm.stdout, "removed") {
			t.Errorf("remove:\n%s", rm)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s still there after --remove", path)
		}
	}
	// A unit the user wrote is never replaced.
	mine := filepath.Join(w.root, "home", ".config", "systemd", "user", "dream.service")
	w.write(filepath.Dir(mine), "dream.service", "[Service]\nExecStart=/usr/local/bin/my-dream\n")
	if r := w.dream(nil, "daemon", "install", "--kind", "systemd"); r.code == 0 {
		t.Errorf("install replaced a foreign unit:\n%s", r)
	}
	if r := w.dream(nil, "daemon", "install", "--kind", "systemd", "--remove"); r.code == 0 {
		t.Errorf("remove deleted a foreign unit:\n%s", r)
	}
}

// A storm of 10,000 transcript writes against the real binary: one dream
// for the memory dir, whatever the number of events.
func TestDaemonEventStormOneDream(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(w.mem, "dup.md", "---\nname: dup\ndescription: d\ntype: user\n---\n\n- 用 tab 缩进。\n- 用 tab 缩进。\n")
	w.daemonFile(fmt.Sprintf("detect = false\n\n[[project]]\nmemory_dir = %q\nsessions_dir = %q\n", w.mem, w.sessions))
	cmd, logs := w.startDaemon([]string{"DREAM_PROVIDER=offline"}, "--idle", "500ms", "--state-dir", w.state)
	f, err := os.OpenFile(filepath.Join(w.sessions, "storm.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(f, `{"type":"user","cwd":%q,"message":{"role":"user","content":"步骤 %d"}}`+"\n", w.repo, i)
	}
	f.Close()
	finished := func() int { return strings.Count(logs.String(), `"msg":"dream finished"`) }
	waitFor(t, 60*time.Second, "the dream", func() bool { return finished() >= 1 })
	// More writes after it: the funnel is walked again and the time gate,
	// just closed by the dream, keeps it from a second.
	w.write(w.sessions, "after.jsonl", "{}\n")
	waitFor(t, 60*time.Second, "the second walk", func() bool { return strings.Contains(logs.String(), `"gate":"time"`) })
	tasks := decodeJSON[[]struct{ ID, Status string }](t, w.dream(nil, "tasks", "--json", "--state-dir", w.state))
	if len(tasks) != 1 || tasks[0].Status != "completed" || finished() != 1 {
		t.Errorf("tasks after the storm: %+v\n%s", tasks, logs)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}
