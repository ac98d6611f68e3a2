package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSyncTwoMachines: `dream sync` moves one machine's memory to a bare
// remote and from there into another machine's empty memory dir; status
// reports the remote's state; sync without a remote is a usage error.
func TestSyncTwoMachines(t *testing.T) {
	t.Parallel()
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

// gitRun runs git in dir with no user or system configuration.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "FILTER_BRANCH_SQUELCH_WARNING=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
}

// TestSyncHandMergeAndRewrittenRemote: the README's two machines through
// the binary. A same-line conflict stops `dream sync` with the file, the
// marked versions and the command to run; after the user edits the file,
// `dream sync --resolved` lands the hand merge and the other machine gets
// it. Then an admin purges a file from the remote's history and
// force-pushes: `dream sync` refuses (exit 1, naming --adopt-remote),
// status says so, and `dream sync --adopt-remote` takes the remote's
// history, names the backup ref, and the purged file is gone.
func TestSyncHandMergeAndRewrittenRemote(t *testing.T) {
	t.Parallel()
	remote := filepath.Join(t.TempDir(), "memory.git")
	gitRun(t, ".", "init", "-q", "--bare", "--initial-branch=main", remote)
	a, b := newWorld(t), newWorld(t)
	flags := func(w *world, more ...string) []string {
		return append(append(more, w.locFlags()...), "--sync-remote", remote, "--sync-branch", "team/memory")
	}
	a.write(a.mem, "secret.md", "staging password: hunter2\n")
	for _, w := range []*world{a, b} {
		if r := w.dream(nil, flags(w, "sync")...); r.code != 0 {
			t.Fatalf("first syncs:\n%s", r)
		}
	}
	a.write(a.mem, "build.md", "Run `make all` to build.\n")
	if r := a.dream(nil, flags(a, "sync")...); r.code != 0 {
		t.Fatalf("a's edit:\n%s", r)
	}
	b.write(b.mem, "build.md", "Run `go build ./...` to build.\n")
	if r := b.dream(nil, flags(b, "status")...); r.code != 0 || !strings.Contains(r.stdout, "stops on a conflict in build.md") {
		t.Fatalf("status before the conflicting sync:\n%s", r)
	}
	r := b.dream(nil, flags(b, "sync")...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "build.md") || !strings.Contains(r.stderr, "dream sync --resolved") || !strings.Contains(r.stderr, "sync-conflicts") {
		t.Fatalf("the conflicting sync:\n%s", r)
	}
	merged := "Run `make all` (it runs `go build ./...`) to build.\n"
	b.write(b.mem, "build.md", merged)
	r = b.dream(nil, flags(b, "sync", "--resolved", "--json")...)
	if r.code != 0 {
		t.Fatalf("sync --resolved:\n%s", r)
	}
	rep := decodeJSON[struct {
		Pulled struct{ Resolved []string }
		Pushed int
	}](t, r)
	if len(rep.Pulled.Resolved) != 1 || rep.Pulled.Resolved[0] != "build.md" || rep.Pushed == 0 {
		t.Fatalf("sync --resolved: %+v", rep)
	}
	if r := a.dream(nil, flags(a, "sync")...); r.code != 0 || snapshot(t, a.mem)["build.md"] != merged {
		t.Fatalf("the other machine after the hand merge:\n%s\n%v", r, snapshot(t, a.mem))
	}

	work := filepath.Join(t.TempDir(), "admin")
	gitRun(t, ".", "clone", "-q", "-b", "team/memory", remote, work)
	gitRun(t, work, "-c", "user.name=admin", "-c", "user.email=admin@example.org", "filter-branch", "-f", "--index-filter", "git rm -q --cached --ignore-unmatch secret.md", "HEAD")
	gitRun(t, work, "push", "-q", "--force", "origin", "HEAD:refs/heads/team/memory")
	r = b.dream(nil, flags(b, "sync")...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "rewritten") || !strings.Contains(r.stderr, "dream sync --adopt-remote") {
		t.Fatalf("sync from the rewritten remote:\n%s", r)
	}
	if _, ok := snapshot(t, b.mem)["secret.md"]; !ok {
		t.Fatal("the refused sync changed the memory")
	}
	if r := b.dream(nil, flags(b, "status")...); !strings.Contains(r.stdout, "history was rewritten") {
		t.Fatalf("status of the rewritten remote:\n%s", r)
	}
	r = b.dream(nil, flags(b, "sync", "--adopt-remote")...)
	if r.code != 0 || !strings.Contains(r.stdout, "backup: refs/dream/backup/") || !strings.Contains(r.stdout, "deleted  secret.md") {
		t.Fatalf("sync --adopt-remote:\n%s", r)
	}
	if _, ok := snapshot(t, b.mem)["secret.md"]; ok {
		t.Fatal("the purged file is back after adopting")
	}
}

// TestRunReportsFailedPush: a dream whose push the remote refuses still
// completes (exit 0), and says so in its text and its JSON (sync.error);
// status then says the next sync pushes, and it does once the remote takes
// pushes again.
func TestRunReportsFailedPush(t *testing.T) {
	t.Parallel()
	remote := filepath.Join(t.TempDir(), "memory.git")
	gitRun(t, ".", "init", "-q", "--bare", "--initial-branch=main", remote)
	gitRun(t, ".", "--git-dir="+remote, "config", "receive.maxInputSize", "1")
	w := newWorld(t)
	flags := func(more ...string) []string {
		return append(append(more, w.locFlags()...), "--sync-remote", remote)
	}
	r := w.dream(nil, flags("run", "--provider", "offline", "--json")...)
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	rep := decodeJSON[struct {
		Status string
		Sync   struct {
			Pushed int
			Error  string
		}
	}](t, r)
	if rep.Status != "completed" || !strings.Contains(rep.Sync.Error, "not pushed") {
		t.Fatalf("run --json with the push refused: %+v", rep)
	}
	if r := w.dream(nil, flags("run", "--provider", "offline")...); r.code != 0 || !strings.Contains(r.stdout, "sync error: the dream landed here but was not pushed") {
		t.Fatalf("run with the push refused:\n%s", r)
	}
	if r := w.dream(nil, flags("status")...); !strings.Contains(r.stdout, "pushes them") {
		t.Fatalf("status after the failed push:\n%s", r)
	}
	gitRun(t, ".", "--git-dir="+remote, "config", "--unset", "receive.maxInputSize")
	if r := w.dream(nil, flags("sync")...); r.code != 0 || strings.Contains(r.stdout, "pushed: 0") {
		t.Fatalf("sync once the remote takes pushes:\n%s", r)
	}
}

// TestSyncWaitsForTheLockE2E: `dream sync` waits for a lock another live
// process holds (--wait, 30s by default) and lands when it is freed;
// --wait 0 exits 3 at once, and a wait that runs out exits 3 saying how
// long it waited and who holds the lock.
func TestSyncWaitsForTheLockE2E(t *testing.T) {
	t.Parallel()
	remote := filepath.Join(t.TempDir(), "memory.git")
	gitRun(t, ".", "init", "-q", "--bare", "--initial-branch=main", remote)
	w := newWorld(t)
	flags := func(more ...string) []string { return append(append(more, w.locFlags()...), "--sync-remote", remote) }
	sleeper := exec.Command("sleep", "2")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	go sleeper.Wait() // reaped when it ends: a zombie's PID would stay live
	w.write(w.mem, ".consolidate-lock", strconv.Itoa(sleeper.Process.Pid))
	if r := w.dream(nil, flags("sync", "--wait", "0")...); r.code != exitHeld {
		t.Fatalf("sync --wait 0 on a held lock:\n%s", r)
	}
	pid := strconv.Itoa(sleeper.Process.Pid)
	if r := w.dream(nil, flags("sync", "--wait", "300ms")...); r.code != exitHeld || !strings.Contains(r.stderr, "after waiting 300ms") || !strings.Contains(r.stderr, pid) {
		t.Fatalf("sync whose wait runs out:\n%s", r)
	}
	if r := w.dream(nil, flags("sync")...); r.code != 0 || !strings.Contains(r.stdout, "pushed: 1") {
		t.Fatalf("sync waiting for the holder to end:\n%s", r)
	}
	if r := w.dream(nil, flags("sync", "--wait", "-1s")...); r.code != exitUsage {
		t.Fatalf("a negative wait:\n%s", r)
	}
}

// TestStatusCutOffFromEtcd: with lock = etcd and etcd out of reach (a
// black-holed endpoint: connections accepted, never answered), `dream
// status` answers within a few seconds with what is known locally: the
// last dream from this machine's lock file, said to be that, and etcd
// marked unreachable, in text and JSON.
func TestStatusCutOffFromEtcd(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	w := newWorld(t)
	w.write(w.mem, ".consolidate-lock", "")
	env := []string{"DREAM_LOCK=etcd", "DREAM_ETCD_ENDPOINTS=http://" + ln.Addr().String()}
	start := time.Now()
	r := w.dream(env, append([]string{"status", "--json"}, w.locFlags()...)...)
	if took := time.Since(start); r.code != 0 || took > 5*time.Second {
		t.Fatalf("status cut off from etcd took %s:\n%s", took, r)
	}
	st := decodeJSON[struct {
		LastConsolidatedAt   *time.Time `json:"last_consolidated_at"`
		LastConsolidatedFrom string     `json:"last_consolidated_from"`
		LockBackend          struct {
			Backend     string
			Unreachable bool
		} `json:"lock_backend"`
	}](t, r)
	if st.LastConsolidatedAt == nil || !strings.Contains(st.LastConsolidatedFrom, "etcd unreachable") || st.LockBackend.Backend != "etcd" || !st.LockBackend.Unreachable {
		t.Fatalf("status --json cut off from etcd: %+v", st)
	}
	r = w.dream(env, append([]string{"status"}, w.locFlags()...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "etcd unreachable") || !strings.Contains(r.stdout, "from this machine's lock file") {
		t.Fatalf("status cut off from etcd:\n%s", r)
	}
}
