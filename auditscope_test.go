package dream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/audit"
)

// memoryAppender appends a line to memory/MEMORY.md, replacing the file as
// every writer of dream does.
type memoryAppender struct{}

func (memoryAppender) ReplacesFiles() bool { return true }

func (memoryAppender) Run(ctx context.Context, job Job) (Outcome, error) {
	p := filepath.Join(job.MemoryDir, "memory", "MEMORY.md")
	b, err := os.ReadFile(p)
	if err != nil {
		return Outcome{}, err
	}
	b = append(b, "- 部署前先跑 `go test -race ./...`\n"...)
	if err := os.WriteFile(p+".new", b, 0o644); err != nil {
		return Outcome{}, err
	}
	return Outcome{FilesTouched: []string{"memory/MEMORY.md"}}, os.Rename(p+".new", p)
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
	s := DefaultSettings()
	s.StateDir = filepath.Join(root, "state")
	s.SyncRemote = remote
	home := filepath.Join(root, "home")
	env := func(k string) (string, bool) {
		if k == "NANOBOT_HOME" {
			return filepath.Dir(ws), true
		}
		return "", false
	}
	cfg, err := ConfigForProject(Project{Host: HostNanobot, MemoryDir: ws}, nil, Config{StateDir: s.StateDir, Settings: s, Runner: memoryAppender{}, Provider: "offline"}, home, env)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cfg)
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
		rep, err := d.StartManual(ctx)
		if err != nil || rep.Status != StatusCompleted || rep.Sync == nil || rep.Sync.Error != "" {
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

// TestOtherHostClearsANarrowedScope: a dir once dreamt as a nanobot
// workspace (by mistake, or before it became another agent's memory) is
// recorded whole again as soon as another agent's layout names it; before,
// the nanobot scope stayed, and every other file's changes landed unrecorded.
func TestOtherHostClearsANarrowedScope(t *testing.T) {
	root := t.TempDir()
	mem, state := filepath.Join(root, "notes", "memory"), filepath.Join(root, "state")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := audit.SetScope(state, mem, []string{"SOUL.md", "memory/MEMORY.md"}); err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings()
	s.StateDir = state
	if _, err := ConfigForProject(Project{Host: "dir", MemoryDir: mem, RepoDir: filepath.Dir(mem)}, nil,
		Config{StateDir: state, Settings: s, Runner: RunnerFunc(func(context.Context, Job) (Outcome, error) { return Outcome{}, nil })},
		root, func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	h, err := audit.Open(context.Background(), state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !h.InScope("topics/billing.md") {
		t.Fatal("the nanobot scope still narrows a dir another host's layout names")
	}
}
