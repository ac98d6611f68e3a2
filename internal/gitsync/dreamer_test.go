package gitsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/settings"
)

// The library's sync flow with this backend wired as the dream command
// wires it (Config.OpenSync = Open).

// writer is a dream that writes dreamt.md with its task id.
type writer struct{}

func (writer) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	if err := os.WriteFile(filepath.Join(job.MemoryDir, "dreamt.md"), []byte(fmt.Sprintf("dream %s\n", job.TaskID)), 0o644); err != nil {
		return dream.Outcome{}, err
	}
	job.Progress(dream.Progress{Kind: dream.ProgressFileTouched, Path: "dreamt.md"})
	// The id it writes over the last dream's is the one its job gave it:
	// that is its evidence for the changed value.
	return dream.Outcome{Turns: 1, FilesTouched: []string{"dreamt.md"}, Shown: []evidence.Shown{{Tool: "job", Source: "the job", Text: job.TaskID}}}, nil
}

// newMemory is a memory dir with an index, and a state dir.
func newMemory(t *testing.T) (mem, state string) {
	t.Helper()
	root := t.TempDir()
	mem, state = filepath.Join(root, "memory"), filepath.Join(root, "state")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("- [A](a.md) — a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return mem, state
}

// syncDreamer is a Dreamer on mem whose history travels through remote.
func syncDreamer(t *testing.T, mem, state, remote string) *dream.Dreamer {
	t.Helper()
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir, s.SyncRemote, s.Timeout = state, remote, time.Minute
	// A clock that stands still, as in the library's own fixture: the
	// task ids, and so the lines writer rewrites, differ only in their
	// random part.
	now := time.Now()
	d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: s.Dream, Runner: writer{}, OpenSync: Open, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// syncMachine is one machine's dreamer on one memory: its own home, state
// dir and memory dir, the shared remote, and settings from mutate.
func syncMachine(t *testing.T, home, rel, remote string, files map[string]string, mutate func(*settings.Settings)) *dream.Dreamer {
	t.Helper()
	mem := filepath.Join(home, rel)
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(mem, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = filepath.Join(home, ".local", "state", "dream")
	s.SyncRemote = remote
	if mutate != nil {
		mutate(&s)
	}
	d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: s.StateDir, Settings: s.Dream, Runner: writer{}, OpenSync: Open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestSyncKeepsMemoriesApart: with one sync_remote for every project (as a
// user's config.toml sets it), two projects' memories never meet, while two
// machines' views of one project (other homes, other state dirs, the same
// path under home) still sync with each other.
func TestSyncKeepsMemoriesApart(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	api := map[string]string{
		"MEMORY.md": "# Memory\n\n- [Build](build.md): how to build\n",
		"build.md":  "# Build\n\n1. `go build ./...`\n2. `go test -race ./...`\n\n> 发布前先跑测试。\n",
	}
	web := map[string]string{"MEMORY.md": "# Memory\n\n- [Deploy](deploy.md)\n", "deploy.md": "# Deploy\n\nRun `npm run deploy`.\n"}
	laptop, desk := filepath.Join(root, "Users", "ann"), filepath.Join(root, "home", "ann")
	apiLaptop := syncMachine(t, laptop, "src/api/memory", remote, api, nil)
	webLaptop := syncMachine(t, laptop, "src/web/memory", remote, web, nil)
	apiDesk := syncMachine(t, desk, "src/api/memory", remote, nil, nil)
	if a, b := apiLaptop.Config().Settings.SyncBranch, apiDesk.Config().Settings.SyncBranch; a != b {
		t.Fatalf("one project on two machines has branches %s and %s", a, b)
	}

	ctx := context.Background()
	for _, d := range []*dream.Dreamer{apiLaptop, webLaptop} {
		if _, err := d.Sync(ctx, dream.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(webLaptop.Config().MemoryDir, "build.md")); !os.IsNotExist(err) {
		t.Fatalf("the api project's memory was pulled into the web project's (%v)", err)
	}
	rep, err := apiDesk.Sync(ctx, dream.SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(apiDesk.Config().MemoryDir, "build.md"))
	if err != nil || string(got) != api["build.md"] {
		t.Fatalf("the api project's second machine got %q (%v); pulled %+v", got, err, rep.Pulled)
	}
	if _, err := os.Stat(filepath.Join(apiDesk.Config().MemoryDir, "deploy.md")); !os.IsNotExist(err) {
		t.Fatal("the web project's memory reached the api project's second machine")
	}

	// sync_branch names a memory by hand: a dir at another path joins it.
	other := syncMachine(t, filepath.Join(root, "srv"), "shared/memory", remote, nil, func(s *settings.Settings) {
		s.SyncBranch = apiLaptop.Config().Settings.SyncBranch
	})
	if _, err := other.Sync(ctx, dream.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(other.Config().MemoryDir, "build.md")); err != nil {
		t.Fatalf("sync_branch did not join the memory: %v", err)
	}
}

// memoryAppender appends a line to memory/MEMORY.md, replacing the file as
// every writer of dream does.
type memoryAppender struct{}

func (memoryAppender) ReplacesFiles() bool { return true }

func (memoryAppender) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	p := filepath.Join(job.MemoryDir, "memory", "MEMORY.md")
	b, err := os.ReadFile(p)
	if err != nil {
		return dream.Outcome{}, err
	}
	b = append(b, "- 部署前先跑 `go test -race ./...`\n"...)
	if err := os.WriteFile(p+".new", b, 0o644); err != nil {
		return dream.Outcome{}, err
	}
	return dream.Outcome{FilesTouched: []string{"memory/MEMORY.md"}}, os.Rename(p+".new", p)
}

// A nanobot workspace holds the user's conversations and the history log
// beside the memory files; the audit history of a dream over it records
// the memory files only, so neither sessions/*.jsonl nor
// memory/history.jsonl ever reaches the audit repo or the sync remote.
func TestNanobotAuditNeverRecordsOrPushesSessions(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	root := t.TempDir()
	remote := filepath.Join(root, "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	ws := t.TempDir()
	for rel, body := range map[string]string{
		"SOUL.md":              "# Soul\n\n1. Answer first.\n",
		"USER.md":              "# User\n\n- 喜欢简短回答\n",
		"memory/MEMORY.md":     "# Memory\n\n## Goals\n\n- ship\n",
		"memory/history.jsonl": "{\"cursor\":1,\"timestamp\":\"2026-05-28 09:00\",\"content\":\"- the user's card ends 1111\"}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "sessions", "cli_direct.jsonl"), []byte("{\"role\":\"user\",\"content\":\"my card is 4111 1111 1111 1111\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = filepath.Join(root, "state")
	s.SyncRemote = remote
	home := filepath.Join(root, "home")
	env := func(k string) (string, bool) {
		if k == "NANOBOT_HOME" {
			return filepath.Dir(ws), true
		}
		return "", false
	}
	cfg, err := hostcfg.For(host.Project{Host: nanobot.HostName, MemoryDir: ws}, nil, dream.Config{StateDir: s.StateDir, Settings: s.Dream, Runner: memoryAppender{}, Provider: "offline", OpenSync: Open}, home, env)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		// The agent keeps talking and logging between dreams.
		f, err := os.OpenFile(filepath.Join(ws, "sessions", "cli_direct.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("{\"role\":\"assistant\",\"content\":\"noted\"}\n")
		f.Close()
		rep, err := d.Run(ctx, dream.RunOptions{})
		if err != nil || rep.Status != dream.StatusCompleted || rep.Sync == nil || rep.Sync.Error != "" {
			t.Fatalf("dream %d: %v %+v", i, err, rep)
		}
	}
	h, err := audit.Open(ctx, s.StateDir, ws)
	if err != nil {
		t.Fatal(err)
	}
	hist := h.GitDir()
	for _, repo := range []string{hist, remote} {
		out, err := exec.Command("git", "--git-dir", repo, "log", "--all", "--name-only", "--format=").CombinedOutput()
		if err != nil {
			t.Fatalf("git log in %s: %v %s", repo, err, out)
		}
		names := string(out)
		if strings.Contains(names, "sessions/") || strings.Contains(names, "history.jsonl") {
			t.Errorf("%s recorded the workspace's conversations or log:\n%s", repo, names)
		}
		if !strings.Contains(names, "memory/MEMORY.md") {
			t.Errorf("%s did not record memory/MEMORY.md:\n%s", repo, names)
		}
	}
}

func bareRepo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", p).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	return p
}

func gitConfig(t *testing.T, repo string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"--git-dir=" + repo, "config"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git config %v: %v %s", args, err, out)
	}
}

// TestDreamReportsSyncAndGoesOnWithoutRemote: a dream lands whatever
// happens to the remote after the pull, and its report says what sync
// did: with the remote unreachable the dream goes on with this machine's
// memory (not refused) and says it was not pushed; with a remote that
// refuses the push the dream still completes and the report carries the
// failure; once the remote takes pushes, Sync pushes every commit made
// meanwhile.
func TestDreamReportsSyncAndGoesOnWithoutRemote(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	remote := filepath.Join(dir, "memory.git")
	mem, state := newMemory(t)
	d := syncDreamer(t, mem, state, remote)

	rep, err := d.Run(ctx, dream.RunOptions{})
	if err != nil || rep.Status != dream.StatusCompleted {
		t.Fatalf("a dream with the remote unreachable: %v %+v", err, rep)
	}
	if rep.Sync == nil || !strings.Contains(rep.Sync.Error, "could not be reached") || rep.Sync.Pushed != 0 {
		t.Fatalf("the report's sync with the remote unreachable: %+v", rep.Sync)
	}

	bareRepo(t, dir)
	gitConfig(t, remote, "receive.maxInputSize", "1") // the server refuses every pack
	rep, err = d.Run(ctx, dream.RunOptions{})
	if err != nil || rep.Status != dream.StatusCompleted {
		t.Fatalf("a dream whose push fails: %v %+v", err, rep)
	}
	if rep.Sync == nil || !strings.Contains(rep.Sync.Error, "not pushed") || rep.Sync.Pushed != 0 {
		t.Fatalf("the report's sync with the push refused: %+v", rep.Sync)
	}
	st, err := d.Status(ctx)
	if err != nil || st.Sync == nil || st.Sync.Next != "push" || st.Sync.Ahead < 2 {
		t.Fatalf("status after the failed push: %v %+v", err, st.Sync)
	}

	gitConfig(t, remote, "--unset", "receive.maxInputSize")
	sr, err := d.Sync(ctx, dream.SyncOptions{})
	if err != nil || sr.Pushed != st.Sync.Ahead || sr.State.State != "in sync" {
		t.Fatalf("sync once the remote takes pushes: %v %+v, want %d pushed", err, sr, st.Sync.Ahead)
	}
}

// TestSyncWaitsForTheLock: a sync that finds the lock held waits for it
// (dream.SyncOptions.Wait) and lands once the holder is done; without a wait,
// or when the wait runs out, it is a *dream.LockHeldError that says how long it
// waited.
func TestSyncWaitsForTheLock(t *testing.T) {
	ctx := context.Background()
	remote := bareRepo(t, t.TempDir())
	mem, state := newMemory(t)
	d := syncDreamer(t, mem, state, remote)
	// Another process's holder: the file lock the Dreamer takes, on the
	// same guard.
	holder := dream.FileLock(mem, filepath.Join(state, "locks", dream.MemoryKey(mem)+".flock"))
	prior, err := holder.TryAcquire()
	if err != nil {
		t.Fatal(err)
	}
	var he *dream.LockHeldError
	if _, err := d.Sync(ctx, dream.SyncOptions{}); !errors.As(err, &he) || he.Waited != 0 {
		t.Fatalf("sync without waiting: %v, want a *LockHeldError", err)
	}
	start := time.Now()
	if _, err := d.Sync(ctx, dream.SyncOptions{Wait: 300 * time.Millisecond}); !errors.As(err, &he) || he.Waited != 300*time.Millisecond ||
		!strings.Contains(err.Error(), "after waiting 300ms") || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("sync whose wait ran out: %v after %s", err, time.Since(start))
	}

	done := make(chan error, 1)
	start = time.Now()
	go func() {
		rep, err := d.Sync(ctx, dream.SyncOptions{Wait: time.Minute})
		if err == nil && rep.Pushed == 0 {
			err = errors.New("nothing pushed")
		}
		done <- err
	}()
	time.Sleep(400 * time.Millisecond)
	if err := holder.Rollback(prior); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("the waiting sync: %v after %s", err, time.Since(start))
	}
}
