package gitsync

import (
	"context"
	"errors"
	"testing"
)

// TestMemoriesOnOneRemoteStayApart: two projects' memories pushed to one
// bare remote travel on their own branches; a pull of one never brings in
// the other's files, and a third machine on the first project's branch gets
// exactly that project's memory.
func TestMemoriesOnOneRemoteStayApart(t *testing.T) {
	t.Parallel()
	remote := bareRemote(t)
	projA := newMachine(t, remote, memoryFiles)
	projB := newMachine(t, remote, map[string]string{
		"MEMORY.md": "# Memory\n\n- [Deploy](deploy.md): 部署步骤\n",
		"deploy.md": "# Deploy\n\n1. `make image`\n2. `kubectl apply -f k8s/`\n",
	})
	var err error
	if projB.repo, err = New(projB.hist, remote, "dream/project-b", projB.state); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, projB.mem)
	mustPush(t, projA)
	if res := mustPull(t, projB); res.Commits != 0 || len(res.Files) != 0 {
		t.Fatalf("project B pulled project A's memory: %+v", res)
	}
	if got := snapshot(t, projB.mem); len(got) != len(before) || got["MEMORY.md"] != before["MEMORY.md"] {
		t.Fatalf("project B's memory changed: %v", got)
	}
	mustPush(t, projB)
	if res := mustPull(t, projA); res.Commits != 0 {
		t.Fatalf("project A pulled project B's memory: %+v", res)
	}
	if _, ok := snapshot(t, projA.mem)["deploy.md"]; ok {
		t.Fatal("project B's file landed in project A")
	}
	// A second machine of project A (its own state dir, same branch).
	laptop := newMachine(t, remote, nil)
	mustPull(t, laptop)
	got, want := snapshot(t, laptop.mem), snapshot(t, projA.mem)
	if len(got) != len(want) || got["build.md"] != want["build.md"] || got["prefs.md"] != want["prefs.md"] {
		t.Fatalf("project A's second machine got %v, want %v", got, want)
	}
	if st := projB.repo.Status(ctx); st.State != "in sync" {
		t.Fatalf("project B after both pushes: %+v", st)
	}
}

func TestCheckBranch(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"dream/3fa2c1d09e8b7a65", "team/memory", "main"} {
		if err := CheckBranch(b); err != nil {
			t.Errorf("%q refused: %v", b, err)
		}
	}
	for _, b := range []string{"", "-f", "--upload-pack=x", "a..b", "a b", "a:b", "x.lock", "/x", "x/", ".hidden", "a/.b", "a~1", "a^", "a\x00b", "a@{1}", "@"} {
		if err := CheckBranch(b); !errors.Is(err, ErrBranch) {
			t.Errorf("%q accepted", b)
		}
	}
}

// TestPullFenced: a pull whose fence fails (the lock was lost while it
// fetched) lands nothing and leaves the branch where it was; the next pull
// with the lock held brings the remote's memory in.
func TestPullFenced(t *testing.T) {
	t.Parallel()
	remote := bareRemote(t)
	a := newMachine(t, remote, memoryFiles)
	mustPush(t, a)
	b := newMachine(t, remote, nil)
	lost := errors.New("lease expired")
	b.repo.SetFence(func(context.Context) error { return lost })
	if _, err := b.repo.Pull(ctx, false); !errors.Is(err, lost) {
		t.Fatalf("fenced pull: %v", err)
	}
	if got := snapshot(t, b.mem); len(got) != 0 {
		t.Fatalf("a fenced pull wrote %v", got)
	}
	if head, _ := b.repo.rev(ctx, "HEAD"); head != "" {
		t.Fatalf("a fenced pull moved HEAD to %s", head)
	}
	b.repo.SetFence(func(context.Context) error { return nil })
	if res := mustPull(t, b); res.Kind != "fast-forward" || len(snapshot(t, b.mem)) != len(memoryFiles) {
		t.Fatalf("pull with the lock held: %+v", res)
	}
}
