package nanobot_test

import (
	"context"
	"errors"
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

// nanobotWorkspace lays out a workspace with nanobot's git store, and a
// Dreamer for it as hostcfg.For builds one, whose runner adds a fact.
func nanobotWorkspace(t *testing.T) (d *dream.Dreamer, git func(args ...string) string) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, ".nanobot", "workspace")
	mem := "# Project memory\n\n## Goals\n\n- Ship the 广场照明 (plaza lighting) controller by June\n"
	mkfile(t, filepath.Join(ws, "SOUL.md"), "# Soul\n\n1. Answer first, explain after.\n")
	mkfile(t, filepath.Join(ws, "USER.md"), "# User\n\n- Replies in Chinese, short\n")
	mkfile(t, filepath.Join(ws, "memory", "MEMORY.md"), mem)
	mkfile(t, filepath.Join(ws, ".gitignore"), "/*\n!memory/\n!SOUL.md\n!USER.md\n!memory/MEMORY.md\n!memory/.dream_cursor\n!.gitignore\n")
	git = func(args ...string) string {
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
	write := dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
		p := filepath.Join(job.MemoryDir, "memory", "MEMORY.md")
		b, err := os.ReadFile(p)
		if err != nil {
			return dream.Outcome{}, err
		}
		err = os.WriteFile(p, append(b, "- The controller talks MQTT to the lamps.\n"...), 0o644)
		return dream.Outcome{FilesTouched: []string{"memory/MEMORY.md"}, Summary: "added a fact"}, err
	})
	cfg, err := hostcfg.For(host.Project{Host: nanobot.HostName, MemoryDir: ws}, nil,
		dream.Config{StateDir: filepath.Join(root, "state"), Settings: settings.DreamDefaults(), Runner: write, Provider: "test"},
		home, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if d, err = dream.New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, git
}

// TestAppliedNanobotReviewIsCommittedToItsStore: a staged nanobot dream that
// is applied later lands like a run does, so nanobot's own git store gets
// its commit (its /dream-log shows it) when the review lands, not at the
// next landed dream.
func TestAppliedNanobotReviewIsCommittedToItsStore(t *testing.T) {
	d, git := nanobotWorkspace(t)
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

// TestFlowCommitSubjects: a dream nanobot.Run starts is committed to
// nanobot's store under the subject it was given (the Config's AfterLand
// reads it from the run's context) and reports the commit; any other
// landed dream of the same Dreamer, a periodic one, under nanobot's
// periodic subject.
func TestFlowCommitSubjects(t *testing.T) {
	d, git := nanobotWorkspace(t)
	ctx := context.Background()
	rep, err := nanobot.Run(ctx, d, dream.RunOptions{}, nanobot.CommitManual)
	if err != nil || rep.Status != dream.StatusCompleted {
		t.Fatalf("manual run: %+v %v", rep, err)
	}
	if subject := strings.TrimSpace(git("log", "-1", "--format=%s")); subject != nanobot.CommitManual || rep.NanobotCommit == "" {
		t.Fatalf("manual run: the store's last subject %q, the report's commit %q", subject, rep.NanobotCommit)
	}
	if got := strings.TrimSpace(git("rev-parse", "HEAD")); !strings.HasPrefix(got, rep.NanobotCommit) {
		t.Errorf("the report names commit %s, the store's HEAD is %s", rep.NanobotCommit, got)
	}
	if rep, err := d.Run(ctx, dream.RunOptions{}); err != nil || rep.Status != dream.StatusCompleted {
		t.Fatalf("periodic run: %+v %v", rep, err)
	}
	if subject := strings.TrimSpace(git("log", "-1", "--format=%s")); subject != nanobot.CommitPeriodic {
		t.Errorf("a dream nanobot.Run did not start is committed as %q, want %q", subject, nanobot.CommitPeriodic)
	}
}

// TestCheckEditCursorRules: the dream cursor only moves forward, to a
// non-negative integer; skills/ is writable; everything else is the
// layout's guard's to decide.
func TestCheckEditCursorRules(t *testing.T) {
	refused := errors.New("the layout refuses it")
	check := nanobot.CheckEdit(func(string, []byte, []byte) error { return refused })
	cursor := "memory/" + nanobot.DreamCursorName
	for _, tc := range []struct {
		name          string
		rel           string
		before, after []byte
		ok            bool
	}{
		{"forward", cursor, []byte("3\n"), []byte("7"), true},
		{"first cursor", cursor, nil, []byte("0"), true},
		{"same", cursor, []byte("5"), []byte("5"), true},
		{"backward", cursor, []byte("7"), []byte("3"), false},
		{"negative", cursor, nil, []byte("-1"), false},
		{"not a number", cursor, []byte("1"), []byte("two"), false},
		{"deleted", cursor, []byte("1"), nil, false},
		{"a skill", nanobot.SkillsDir + "/deploy/SKILL.md", nil, []byte("# Deploy\n"), true},
		{"the layout's", "sessions/x.jsonl", nil, []byte("{}\n"), false},
	} {
		err := check(tc.rel, tc.before, tc.after)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %s %q -> %q: err %v, want ok=%v", tc.name, tc.rel, tc.before, tc.after, err, tc.ok)
		}
	}
}

func mkfile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
