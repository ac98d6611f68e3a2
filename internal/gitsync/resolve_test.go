package gitsync

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
)

// conflicted sets up the same-line conflict of the README's two machines:
// a and b share the memory, a changes a line of prefs.md and another file
// and pushes, b changes the same line and records it. It returns b's
// conflict error from a pull that changed nothing.
func conflicted(t *testing.T) (a, b *machine, ce *ConflictError) {
	t.Helper()
	remote := bareRemote(t)
	a = newMachine(t, remote, memoryFiles)
	mustPush(t, a)
	b = newMachine(t, remote, nil)
	mustPull(t, b)

	write(t, filepath.Join(a.mem, "prefs.md"), "# 用户偏好\n\n- 回答用英文\n- Prefers table tests\n")
	write(t, filepath.Join(a.mem, "build.md"), memoryFiles["build.md"]+"\n## Lint\n\n- staticcheck before every commit\n")
	a.record(t)
	mustPush(t, a)
	write(t, filepath.Join(b.mem, "prefs.md"), "# 用户偏好\n\n- 回答用日文\n- Prefers table tests\n")
	b.record(t)
	before := snapshot(t, b.mem)
	_, err := b.repo.Pull(ctx, false)
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
		t.Fatalf("pull: %v, want a *ConflictError", err)
	}
	if !equalMaps(snapshot(t, b.mem), before) {
		t.Fatal("a conflicting pull changed the memory")
	}
	return a, b, ce
}

// TestHandMergeAccepted: after a same-line conflict, the error names the
// file, where both versions can be read (marked, outside the memory) and
// the command to run; a plain pull of the hand-merged file still stops,
// and the pull that accepts the resolution makes a merge commit with both
// histories as parents, the user's text for the file and the remote's
// other change landed. The other machine then fast-forwards to it.
func TestHandMergeAccepted(t *testing.T) {
	t.Parallel()
	a, b, ce := conflicted(t)
	msg := ce.Error()
	for _, want := range []string{"prefs.md", b.mem, ce.Marked, "dream sync --resolved", "<<<<<<< HEAD"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the conflict message does not say %q:\n%s", want, msg)
		}
	}
	if !slices.Equal(ce.Files, []string{"prefs.md"}) {
		t.Errorf("conflicted files %v, want [prefs.md]", ce.Files)
	}
	if strings.HasPrefix(ce.Marked, b.mem) {
		t.Errorf("the marked versions are inside the memory dir: %s", ce.Marked)
	}
	marked := read(t, filepath.Join(ce.Marked, "prefs.md"))
	for _, want := range []string{"<<<<<<< HEAD\n- 回答用日文\n=======\n- 回答用英文\n>>>>>>> ", "- Prefers table tests"} {
		if !strings.Contains(marked, want) {
			t.Fatalf("the marked prefs.md lacks %q:\n%s", want, marked)
		}
	}

	merged := "# 用户偏好\n\n- 回答用英文，术语附日文\n- Prefers table tests\n"
	write(t, filepath.Join(b.mem, "prefs.md"), merged)
	b.record(t)
	if _, err := b.repo.Pull(ctx, false); !errors.Is(err, ErrConflict) {
		t.Fatalf("a pull that does not say the conflict is resolved: %v, want ErrConflict", err)
	}
	res, err := b.repo.Pull(ctx, true)
	if err != nil {
		t.Fatalf("pull of the resolution: %v", err)
	}
	if res.Kind != "merge" || !slices.Equal(res.Resolved, []string{"prefs.md"}) {
		t.Fatalf("pull of the resolution: %+v", res)
	}
	if got := read(t, filepath.Join(b.mem, "prefs.md")); got != merged {
		t.Fatalf("prefs.md after the resolution: %q, want the hand merge %q", got, merged)
	}
	if !strings.Contains(read(t, filepath.Join(b.mem, "build.md")), "staticcheck") {
		t.Fatal("the remote's change that did not conflict was not merged")
	}
	aHead, _ := a.repo.rev(ctx, "HEAD")
	if p2, _ := b.repo.rev(ctx, "HEAD^2"); p2 != aHead {
		t.Fatalf("the merge's second parent is %q, want the remote's head %q", p2, aHead)
	}
	if _, err := os.Stat(ce.Marked); !os.IsNotExist(err) {
		t.Errorf("the marked versions were left behind: %v", err)
	}
	if n := mustPush(t, b); n != 3 { // b's edit, the hand merge's record, the merge
		t.Fatalf("pushed %d, want 3", n)
	}
	if r := mustPull(t, a); r.Kind != "fast-forward" {
		t.Fatalf("the other machine's pull: %+v", r)
	}
	if !equalMaps(snapshot(t, a.mem), snapshot(t, b.mem)) {
		t.Fatal("the machines differ after the resolution")
	}
}

// TestResolutionOnlyAgainstWhatWasShown: a resolution is taken only for
// the remote version the conflict error showed. When the remote changed
// the file again after the report, or no conflict was reported yet, the
// pull stops again naming the file as stale, and the next one accepts it.
func TestResolutionOnlyAgainstWhatWasShown(t *testing.T) {
	t.Parallel()
	a, b, _ := conflicted(t)
	write(t, filepath.Join(a.mem, "prefs.md"), "# 用户偏好\n\n- 回答用法文\n- Prefers table tests\n")
	a.record(t)
	mustPush(t, a)
	write(t, filepath.Join(b.mem, "prefs.md"), "# 用户偏好\n\n- 回答用英文和日文\n- Prefers table tests\n")
	b.record(t)
	_, err := b.repo.Pull(ctx, true)
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Stale, []string{"prefs.md"}) || !strings.Contains(ce.Error(), "not the version last reported") {
		t.Fatalf("a resolution against a remote that moved on: %v, want a conflict naming prefs.md as stale", err)
	}
	if !strings.Contains(read(t, filepath.Join(ce.Marked, "prefs.md")), "回答用法文") {
		t.Fatal("the marked file does not show the remote's new version")
	}
	if _, err := b.repo.Pull(ctx, true); err != nil {
		t.Fatalf("the resolution after the new report: %v", err)
	}

	// No report at all: a resolution is not taken blind.
	_, c, _ := conflicted(t)
	if err := c.repo.setRef(ctx, c.repo.conflictRef(), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.repo.Pull(ctx, true); !errors.As(err, &ce) || len(ce.Stale) != 1 {
		t.Fatalf("a resolution with no conflict reported: %v, want a stale conflict", err)
	}
}

// TestStatusSaysWhatSyncWillDo: Status's Next is what the pull that follows
// does, in each shape of the two histories, counting edits not yet
// recorded (a conflict only a hand edit makes is foreseen).
func TestStatusSaysWhatSyncWillDo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		here, there map[string]string // edits on this machine (not recorded) and on the remote
		want        dream.SyncState
	}{
		{name: "in sync", want: dream.SyncState{State: "in sync", Next: NextNothing}},
		{name: "behind", there: map[string]string{"build.md": "# Build\n\nmake\n"}, want: dream.SyncState{State: "behind", Behind: 1, Next: NextFastForward}},
		{name: "ahead", here: map[string]string{"build.md": "# Build\n\nmake\n"}, want: dream.SyncState{State: "ahead", Ahead: 1, Next: NextPush, HandEdits: []string{"build.md"}}},
		{name: "clean merge", here: map[string]string{"build.md": "# Build\n\nmake\n"}, there: map[string]string{"new.md": "# New\n"},
			want: dream.SyncState{State: "diverged", Ahead: 1, Behind: 1, Next: NextMerge, HandEdits: []string{"build.md"}}},
		{name: "conflict", here: map[string]string{"prefs.md": "# 用户偏好\n\n- 回答用日文\n"}, there: map[string]string{"prefs.md": "# 用户偏好\n\n- 回答用英文\n"},
			want: dream.SyncState{State: "diverged", Ahead: 1, Behind: 1, Next: NextConflict, Conflicts: []string{"prefs.md"}, HandEdits: []string{"prefs.md"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := bareRemote(t)
			a := newMachine(t, remote, memoryFiles)
			mustPush(t, a)
			b := newMachine(t, remote, nil)
			mustPull(t, b)
			if tc.there != nil {
				for f, body := range tc.there {
					write(t, filepath.Join(a.mem, f), body)
				}
				a.record(t)
				mustPush(t, a)
			}
			for f, body := range tc.here {
				write(t, filepath.Join(b.mem, f), body)
			}
			st := b.repo.Status(ctx)
			if st.State != tc.want.State || st.Ahead != tc.want.Ahead || st.Behind != tc.want.Behind || st.Next != tc.want.Next ||
				!slices.Equal(st.Conflicts, tc.want.Conflicts) || !slices.Equal(st.HandEdits, tc.want.HandEdits) {
				t.Fatalf("status: %+v\nwant %+v", st, tc.want)
			}
			if head, _ := b.repo.rev(ctx, "HEAD"); head != st.Local && len(tc.here) == 0 {
				t.Fatalf("status moved HEAD")
			}
			// What the sync then does.
			b.record(t)
			res, err := b.repo.Pull(ctx, false)
			switch tc.want.Next {
			case NextConflict:
				if !errors.Is(err, ErrConflict) {
					t.Fatalf("status foresaw a conflict, the pull: %+v %v", res, err)
				}
			case NextMerge, NextFastForward:
				if err != nil || res.Kind != tc.want.Next {
					t.Fatalf("status foresaw %s, the pull: %+v %v", tc.want.Next, res, err)
				}
			default:
				if err != nil || res.Commits != 0 {
					t.Fatalf("status foresaw %s, the pull: %+v %v", tc.want.Next, res, err)
				}
			}
		})
	}
}

// rewriteRemote purges file from the remote branch's history the way an
// admin would (git filter-branch in a clone) and force-pushes it.
func rewriteRemote(t *testing.T, remote, branch, file string) {
	t.Helper()
	work := filepath.Join(t.TempDir(), "clone")
	gitIn(t, t.TempDir(), "clone", "-q", "-b", branch, remote, work)
	cmd := exec.Command("git", "-c", "user.name=admin", "-c", "user.email=admin@example.org", "filter-branch", "-f", "--index-filter", "git rm -q --cached --ignore-unmatch "+file, "HEAD")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "FILTER_BRANCH_SQUELCH_WARNING=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("filter-branch: %v %s", err, out)
	}
	gitIn(t, work, "push", "-q", "--force", "origin", "HEAD:refs/heads/"+branch)
}

// TestForcePushedRemoteRefused: a remote whose history was rewritten to
// purge a file is neither merged nor pushed over (the file and its commits
// would come back); status says so; adopting the remote's history keeps
// this machine's in a backup ref, names the commit made here that only the
// backup now holds, and leaves the memory as the remote has it.
func TestForcePushedRemoteRefused(t *testing.T) {
	t.Parallel()
	remote := bareRemote(t)
	files := map[string]string{"secret.md": "the staging password is hunter2\n"}
	for k, v := range memoryFiles {
		files[k] = v
	}
	a := newMachine(t, remote, files)
	mustPush(t, a)
	b := newMachine(t, remote, nil)
	mustPull(t, b)
	write(t, filepath.Join(b.mem, "prefs.md"), memoryFiles["prefs.md"]+"- 代码注释用英文\n")
	b.record(t)
	oldHead, _ := b.repo.rev(ctx, "HEAD")

	rewriteRemote(t, remote, "dream/test-memory", "secret.md")

	if st := b.repo.Status(ctx); st.State != "rewritten" || st.Next != NextRefused {
		t.Fatalf("status after the rewrite: %+v", st)
	}
	before := snapshot(t, b.mem)
	_, err := b.repo.Pull(ctx, false)
	if !errors.Is(err, ErrRewritten) || !strings.Contains(err.Error(), "dream sync --adopt-remote") || !strings.Contains(err.Error(), "1 commit(s) made here") {
		t.Fatalf("pull from the rewritten remote: %v", err)
	}
	if !equalMaps(snapshot(t, b.mem), before) {
		t.Fatal("the refused pull changed the memory")
	}
	if _, err := b.repo.Push(ctx); !errors.Is(err, ErrRewritten) {
		t.Fatalf("push over the rewritten remote: %v, want ErrRewritten", err)
	}
	// The other machine, which synced the purged file itself, is refused too.
	if _, err := a.repo.Pull(ctx, false); !errors.Is(err, ErrRewritten) {
		t.Fatalf("the other machine's pull: %v, want ErrRewritten", err)
	}

	res, err := b.repo.AdoptRemote(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kept, _ := b.repo.rev(ctx, res.Backup); !strings.HasPrefix(res.Backup, BackupPrefix) || kept != oldHead {
		t.Fatalf("backup %q holds %q, want this machine's old head %q", res.Backup, kept, oldHead)
	}
	if len(res.Unsynced) != 1 || !strings.Contains(res.Unsynced[0], "hand edits") || !strings.Contains(res.ShowBackup, res.Backup) {
		t.Fatalf("adopt result: %+v, want the one unsynced hand edit named", res)
	}
	if _, ok := snapshot(t, b.mem)["secret.md"]; ok {
		t.Fatal("the purged file is still in the memory after adopting")
	}
	if got := read(t, filepath.Join(b.mem, "prefs.md")); got != memoryFiles["prefs.md"] {
		t.Fatalf("prefs.md after adopting: %q", got)
	}
	if st := b.repo.Status(ctx); st.State != "in sync" {
		t.Fatalf("status after adopting: %+v", st)
	}
	if _, err := a.repo.AdoptRemote(ctx); err != nil {
		t.Fatal(err)
	}
	if !equalMaps(snapshot(t, a.mem), snapshot(t, b.mem)) {
		t.Fatal("the machines differ after both adopted")
	}

	// A deleted branch is refused too; adopting starts it again from here.
	gitIn(t, t.TempDir(), "--git-dir="+remote, "update-ref", "-d", "refs/heads/dream/test-memory")
	if _, err := b.repo.Pull(ctx, false); !errors.Is(err, ErrRewritten) || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("pull after the branch was deleted: %v", err)
	}
	if _, err := b.repo.AdoptRemote(ctx); err != nil {
		t.Fatal(err)
	}
	if n := mustPush(t, b); n == 0 {
		t.Fatal("nothing pushed to start the branch again")
	}
}

// TestResolvedDeletion: a file deleted here and changed on the remote
// conflicts; resolving keeps it deleted (this machine's state of the file),
// and the merge lands.
func TestResolvedDeletion(t *testing.T) {
	t.Parallel()
	remote := bareRemote(t)
	a := newMachine(t, remote, memoryFiles)
	mustPush(t, a)
	b := newMachine(t, remote, nil)
	mustPull(t, b)
	write(t, filepath.Join(a.mem, "build.md"), memoryFiles["build.md"]+"\n- lint first\n")
	a.record(t)
	mustPush(t, a)
	if err := os.Remove(filepath.Join(b.mem, "build.md")); err != nil {
		t.Fatal(err)
	}
	b.record(t)
	var ce *ConflictError
	if _, err := b.repo.Pull(ctx, false); !errors.As(err, &ce) || !slices.Equal(ce.Files, []string{"build.md"}) {
		t.Fatalf("modify/delete: %v, want a conflict on build.md", err)
	}
	if _, err := b.repo.Pull(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := snapshot(t, b.mem)["build.md"]; ok {
		t.Fatal("the resolution brought back the file deleted here")
	}
	if out, _ := b.repo.git(ctx, "ls-tree", "--name-only", "HEAD"); strings.Contains(out, "build.md") {
		t.Fatalf("the merge's tree has build.md: %s", out)
	}
}
