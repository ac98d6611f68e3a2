package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncTwoMachines: `dream sync` moves one machine's memory to a bare
// remote and from there into another machine's empty memory dir; status
// reports the remote's state; sync without a remote is a usage error.
func TestSyncTwoMachines(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	a, b := newWorld(t), newWorld(t)
	for _, name := range []string{"MEMORY.md", "build.md"} {
		if err := os.Remove(filepath.Join(b.mem, name)); err != nil {
			t.Fatal(err)
		}
	}
	if r := a.dream(nil, append([]string{"sync"}, a.locFlags()...)...); r.code != exitUsage || !strings.Contains(r.stderr, "sync_remote") {
		t.Fatalf("sync without a remote:\n%s", r)
	}
	// The two worlds' memory dirs are not under their homes, so their
	// identities differ: --sync-branch names the one memory they share.
	flags := func(w *world) []string {
		return append(w.locFlags(), "--sync-remote", remote, "--sync-branch", "team/memory")
	}
	r := a.dream(nil, append([]string{"sync", "--json"}, flags(a)...)...)
	if r.code != 0 {
		t.Fatalf("first sync:\n%s", r)
	}
	rep := decodeJSON[struct {
		Pushed int
		State  struct{ State string }
	}](t, r)
	if rep.Pushed != 1 || rep.State.State != "in sync" {
		t.Fatalf("first sync: %+v", rep)
	}
	if r := b.dream(nil, append([]string{"sync"}, flags(b)...)...); r.code != 0 || !strings.Contains(r.stdout, "fast-forward") {
		t.Fatalf("second machine's sync:\n%s", r)
	}
	if got, want := snapshot(t, b.mem), snapshot(t, a.mem); len(got) != len(want) || got["build.md"] != want["build.md"] {
		t.Fatalf("second machine's memory %v, want %v", got, want)
	}
	// A hand edit on b: a is now behind.
	b.write(b.mem, "build.md", "---\nname: build\ndescription: how the project builds\ntype: project\n---\n\nRun `make all` to build.\nRun `make test` before pushing.\n")
	if r := b.dream(nil, append([]string{"sync"}, flags(b)...)...); r.code != 0 {
		t.Fatalf("sync of a hand edit:\n%s", r)
	}
	st := a.dream(nil, append([]string{"status"}, flags(a)...)...)
	if st.code != 0 || !strings.Contains(st.stdout, "behind by 1 commit") {
		t.Fatalf("status of the machine behind:\n%s", st)
	}
	// Two other projects on the same remote, with no sync_branch: each
	// memory travels on its own branch, and neither pulls the other's.
	c, d := newWorld(t), newWorld(t)
	d.write(d.mem, "deploy.md", "# Deploy\n\n1. `make image`\n2. 推送镜像\n")
	own := func(w *world) []string { return append(w.locFlags(), "--sync-remote", remote) }
	for _, w := range []*world{d, c} {
		if r := w.dream(nil, append([]string{"sync"}, own(w)...)...); r.code != 0 || strings.Contains(r.stdout, "fast-forward") {
			t.Fatalf("sync of a project of its own:\n%s", r)
		}
	}
	if _, ok := snapshot(t, c.mem)["deploy.md"]; ok {
		t.Fatal("one project's memory was pulled into another's")
	}
}
