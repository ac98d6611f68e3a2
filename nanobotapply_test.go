package dream_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/settings"
)

// TestAppliedNanobotReviewIsCommittedToItsStore: a staged nanobot dream that
// is applied later lands like a run does, so nanobot's own git store gets
// its commit (its /dream-log shows it) when the review lands, not at the
// next landed dream.
func TestAppliedNanobotReviewIsCommittedToItsStore(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, ".nanobot", "workspace")
	mem := "# Project memory\n\n## Goals\n\n- Ship the 广场照明 (plaza lighting) controller by June\n"
	mkfile(t, filepath.Join(ws, "SOUL.md"), "# Soul\n\n1. Answer first, explain after.\n")
	mkfile(t, filepath.Join(ws, "USER.md"), "# User\n\n- Replies in Chinese, short\n")
	mkfile(t, filepath.Join(ws, "memory", "MEMORY.md"), mem)
	mkfile(t, filepath.Join(ws, ".gitignore"), "/*\n!memory/\n!SOUL.md\n!USER.md\n!memory/MEMORY.md\n!memory/.dream_cursor\n!.gitignore\n")
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("add", ".gitignore", "SOUL.md", "USER.md", "memory/MEMORY.md")
	git("-c", "user.name=nanobot", "-c", "user.email=nanobot@dream", "commit", "-q", "-m", "init: nanobot memory store")

	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = filepath.Join(root, "state")
	write := dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
		p := filepath.Join(job.MemoryDir, "memory", "MEMORY.md")
		err := os.WriteFile(p, []byte(mem+"- The controller talks MQTT to the lamps.\n"), 0o644)
		return dream.Outcome{FilesTouched: []string{"memory/MEMORY.md"}, Summary: "added a fact"}, err
	})
	cfg, err := hostcfg.For(host.Project{Host: nanobot.HostName, MemoryDir: ws}, nil,
		dream.Config{StateDir: s.StateDir, Settings: s.Dream, Runner: write, Provider: "test"}, home, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	d, err := dream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	rep, err := d.Run(ctx, dream.RunOptions{Review: true})
	if err != nil || rep.Status != dream.StatusStaged {
		t.Fatalf("review run: %+v %v", rep, err)
	}
	if n := strings.Count(git("log", "--oneline"), "\n"); n != 1 {
		t.Fatalf("a staged dream reached nanobot's store: %d commits", n)
	}
	if _, _, err := d.Apply(ctx, rep.TaskID); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(git("log", "--oneline"), "\n"); n != 2 {
		t.Fatalf("after apply nanobot's store has %d commits, want 2:\n%s", n, git("log", "--oneline"))
	}
	if !strings.Contains(git("show", "HEAD:memory/MEMORY.md"), "MQTT") {
		t.Fatalf("nanobot's store does not hold the applied change")
	}
}
