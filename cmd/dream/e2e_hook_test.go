package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/jsonc"
	"github.com/dreamkit/dream/internal/raceenv"
)

// hostWorld is a home laid out as one agent writes it, from the fixture
// trees under testdata/hosts, and a repository the agent worked in.
type hostWorld struct {
	t                   *testing.T
	root, home, repo    string
	env                 []string
	layout              host.Layout
	current, transcript string
}

// fixtureSrc is the repository's fixture homes.
var fixtureSrc = filepath.Join("..", "..", "testdata", "hosts")

func newHostWorld(t *testing.T, agent string) *hostWorld {
	t.Helper()
	w := &hostWorld{t: t, root: t.TempDir()}
	w.home = filepath.Join(w.root, "home")
	w.repo = filepath.Join(w.root, "src", "shop-api")
	mustMkdir(t, filepath.Join(w.repo, ".git"))
	mustMkdir(t, filepath.Join(w.repo, "internal", "pay"))
	w.env = []string{
		"HOME=" + w.home,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"PATH=" + os.Getenv("PATH"),
		"DREAM_MIN_SESSIONS=3",
		raceenv.Env(),
	}
	var expect struct {
		Current string `json:"current"`
	}
	b, err := os.ReadFile(filepath.Join(fixtureSrc, agent, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &expect)
	w.current = expect.Current
	fixHome := filepath.Join(fixtureSrc, agent, "home")
	switch agent {
	case "claude":
		copyTree(t, filepath.Join(fixHome, ".claude", "projects", "PROJECT"), w.resolve(agent).SessionsDir, w)
		w.transcript = filepath.Join(w.layout.SessionsDir, w.current+".jsonl")
	case "codex":
		copyTree(t, fixHome, w.home, w)
		w.resolve(agent)
		filepath.WalkDir(w.layout.SessionsDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), w.current) {
				w.transcript = p
			}
			return nil
		})
	case "gemini":
		copyTree(t, fixHome, w.home, w)
		w.resolve(agent)
		matches, _ := filepath.Glob(filepath.Join(w.layout.SessionsDir, "session-*-"+w.current[:8]+".jsonl"))
		if len(matches) != 1 {
			t.Fatalf("no transcript for %s: %v", w.current, matches)
		}
		w.transcript = matches[0]
	}
	// Every transcript was touched an hour ago, after the last dream.
	hourAgo := time.Now().Add(-time.Hour)
	filepath.WalkDir(w.home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, hourAgo, hourAgo)
		}
		return nil
	})
	return w
}

func (w *hostWorld) resolve(agent string) host.Layout {
	l, err := host.Resolve(agent, w.repo, w.home, func(string) (string, bool) { return "", false })
	if err != nil {
		w.t.Fatal(err)
	}
	w.layout = l
	return l
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, src, dst string, w *hostWorld) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte("@REPO@"), []byte(w.repo))
		b = bytes.ReplaceAll(b, []byte("@HOME@"), []byte(w.home))
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (w *hostWorld) dream(args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env, cmd.Dir = w.env, w.repo
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// installedCommand reads the hook command `dream init` wrote.
func installedCommand(t *testing.T, path, event string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root, _, err := jsonc.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, g := range root.Get("hooks").Get(event).Items {
		for _, h := range g.Get("hooks").Items {
			if c, ok := h.Get("command").Text(); ok {
				cmds = append(cmds, c)
			}
		}
	}
	if len(cmds) != 1 {
		t.Fatalf("%s holds %d %s hooks: %v", path, len(cmds), event, cmds)
	}
	return cmds[0]
}

// runHook runs the installed hook command as the agent does (through the
// shell, payload on stdin) and returns how long it took to return.
func (w *hostWorld) runHook(command string, payload map[string]any) (result, time.Duration) {
	w.t.Helper()
	in, _ := json.Marshal(payload)
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Env, cmd.Dir = w.env, filepath.Join(w.repo, "internal", "pay")
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}, took
}

// TestHookEndToEnd: for each installer, `dream init AGENT` writes the hook;
// the agent's hook JSON on stdin makes it return at once, silent and exit
// 0, with the time gate closed; with it open it starts the dream detached
// and still returns at once; the background dream then completes and
// completes the lock.
func TestHookEndToEnd(t *testing.T) {
	t.Parallel()
	cases := []struct {
		agent, event string
		settings     func(w *hostWorld) string
		payload      func(w *hostWorld) map[string]any
	}{
		{"claude", "SessionEnd", func(w *hostWorld) string { return filepath.Join(w.home, ".claude", "settings.json") },
			func(w *hostWorld) map[string]any {
				return map[string]any{"session_id": w.current, "transcript_path": w.transcript, "cwd": filepath.Join(w.repo, "internal", "pay"),
					"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
			}},
		{"codex", "Stop", func(w *hostWorld) string { return filepath.Join(w.home, ".codex", "hooks.json") },
			func(w *hostWorld) map[string]any {
				return map[string]any{"session_id": w.current, "transcript_path": w.transcript, "cwd": w.repo, "hook_event_name": "Stop",
					"model": "gpt-5-codex", "turn_id": "1", "permission_mode": "default", "stop_hook_active": false, "last_assistant_message": "Done."}
			}},
		{"gemini", "SessionEnd", func(w *hostWorld) string { return filepath.Join(w.home, ".gemini", "settings.json") },
			func(w *hostWorld) map[string]any {
				return map[string]any{"session_id": w.current, "transcript_path": w.transcript, "cwd": w.repo, "hook_event_name": "SessionEnd",
					"timestamp": time.Now().UTC().Format(time.RFC3339), "reason": "exit"}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.agent, func(t *testing.T) {
			w := newHostWorld(t, tc.agent)
			if r := w.dream("init", tc.agent); r.code != 0 {
				t.Fatalf("init: %s", r)
			}
			command := installedCommand(t, tc.settings(w), tc.event)
			lockPath := filepath.Join(w.layout.MemoryDir, ".consolidate-lock")

			// Time gate closed: consolidated an hour ago.
			recent := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.WriteFile(lockPath, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(lockPath, recent, recent)
			r, closed := w.runHook(command, tc.payload(w))
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Fatalf("hook with the time gate closed: %s", r)
			}
			if fi, _ := os.Stat(lockPath); !fi.ModTime().Equal(recent) {
				t.Fatalf("the lock moved with the time gate closed")
			}

			// Time gate open: consolidated two days ago.
			old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
			os.Chtimes(lockPath, old, old)
			r, started := w.runHook(command, tc.payload(w))
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Fatalf("hook with the gates open: %s", r)
			}
			checkOwnSession(t, filepath.Join(w.home, ".local", "state", "dream", "hook.log"))
			t.Logf("%s: the hook returned in %v with the time gate closed, %v when it started a dream (goal: <200ms, <1s)", tc.agent, closed.Round(time.Millisecond), started.Round(time.Millisecond))

			// The background dream completes the lock: mtime now, empty body.
			deadline := time.Now().Add(90 * time.Second)
			for {
				fi, err := os.Stat(lockPath)
				body, _ := os.ReadFile(lockPath)
				if err == nil && fi.ModTime().After(old.Add(time.Hour)) && len(bytes.TrimSpace(body)) == 0 {
					break
				}
				if time.Now().After(deadline) {
					log, _ := os.ReadFile(filepath.Join(w.home, ".local", "state", "dream", "hook.log"))
					t.Fatalf("the background dream did not complete the lock (mtime %v, body %q); hook.log:\n%s", fi.ModTime(), body, log)
				}
				time.Sleep(50 * time.Millisecond)
			}
			log, _ := os.ReadFile(filepath.Join(w.home, ".local", "state", "dream", "hook.log"))
			if !strings.Contains(string(log), "dream started in the background") {
				t.Errorf("hook.log does not record the start:\n%s", log)
			}
			// The lock completes just before the task entry is finished:
			// give the dream a moment to write it.
			for {
				r := w.dream("tasks", "--json", "--host", tc.agent)
				if r.code == 0 && strings.Contains(r.stdout, `"completed"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no completed task after the background dream: %s", r)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if errs := host.CheckFormats(w.layout); len(errs) > 0 {
				t.Errorf("after the background dream the agent cannot load: %v", errs)
			}
		})
	}
}

// TestHookNeverFails: junk, nothing, a hung stdin or a missing memory dir
// all return exit 0 and print nothing.
func TestHookNeverFails(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude")
	// A dream an hour ago keeps the time gate closed, so no background
	// dream outlives the test.
	lockPath := filepath.Join(w.layout.MemoryDir, ".consolidate-lock")
	os.WriteFile(lockPath, nil, 0o644)
	for name, in := range map[string]string{
		"empty":        "",
		"junk":         "not json {",
		"wrong types":  `{"session_id": 7, "cwd": ["x"]}`,
		"hostile path": `{"session_id": "../../x", "transcript_path": "/etc/passwd", "cwd": "/"}`,
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(binPath, "hook")
			cmd.Env, cmd.Dir = w.env, w.repo
			cmd.Stdin = strings.NewReader(in)
			out, err := cmd.CombinedOutput()
			if err != nil || len(out) != 0 {
				t.Fatalf("err %v, output %q", err, out)
			}
		})
	}
	t.Run("stdin never closed", func(t *testing.T) {
		cmd := exec.Command(binPath, "hook", "--host", "claude")
		cmd.Env, cmd.Dir = w.env, w.repo
		pr, pw, _ := os.Pipe()
		defer pw.Close()
		cmd.Stdin = pr
		start := time.Now()
		out, err := cmd.CombinedOutput()
		pr.Close()
		if err != nil || len(out) != 0 {
			t.Fatalf("err %v, output %q", err, out)
		}
		t.Logf("returned after %v with stdin held open", time.Since(start).Round(time.Millisecond))
	})
}

// checkOwnSession reads the background dream's pid from the hook log and,
// while it still runs, checks in /proc that it leads its own session and
// process group, so the agent's exit or a kill of the hook's group does
// not reach it.
func checkOwnSession(t *testing.T, logPath string) {
	t.Helper()
	b, _ := os.ReadFile(logPath)
	m := regexp.MustCompile(`\(pid (\d+)\)`).FindAllSubmatch(b, -1)
	if len(m) == 0 {
		t.Fatalf("no pid in the hook log:\n%s", b)
	}
	pid := string(m[len(m)-1][1])
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Logf("background dream %s already finished (or no /proc): session not checked", pid)
		return
	}
	// pid (comm) state ppid pgrp session ...
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 4 || f[2] != pid || f[3] != pid {
		t.Fatalf("background dream %s: pgrp %s session %s, want both %s", pid, f[2], f[3], pid)
	}
}
