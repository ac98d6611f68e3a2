package multihost

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
)

// syncResult is one `dream sync` as a host saw it.
type syncResult struct {
	Report dream.SyncReport `json:"report"`
	Error  string           `json:"error,omitempty"`
	Start  time.Time        `json:"start"`
	End    time.Time        `json:"end"`
}

// hostSync is the helper's "sync" mode: one sync that waits for the lock
// as `dream sync` does, resolving or adopting when the test says so; the
// result goes to sync.json in the host's dir.
func hostSync(ctx context.Context, d *dream.Dreamer, dir string, env func(string) string) error {
	o := dream.SyncOptions{Wait: time.Minute, Resolved: env("RESOLVED") != "", AdoptRemote: env("ADOPT") != ""}
	res := syncResult{Start: time.Now()}
	rep, err := d.Sync(ctx, o)
	res.Report, res.End = rep, time.Now()
	if err != nil {
		res.Error = err.Error()
	}
	b, _ := json.Marshal(res)
	return os.WriteFile(filepath.Join(dir, "sync.json"), b, 0o644)
}

// testSyncAcrossHosts is the multi-host test's last phase, the sync cases
// of issue 28 across the namespaces: two syncs started while a dream holds
// the lock both land; a same-line conflict is refused with the command,
// and the hand merge is accepted; a push the remote refuses after a dream
// landed is reported and recovered; a force-pushed remote is refused and
// adopted.
func testSyncAcrossHosts(t *testing.T, hosts []mhost, bare string, run func(mhost, string, map[string]string) *proc, probe func(mhost) map[string]any) {
	sync := func(h mhost, extra map[string]string) syncResult {
		t.Helper()
		p := filepath.Join(h.dir, "sync.json")
		os.Remove(p)
		run(h, "sync", extra).wait(t, 2*time.Minute)
		var r syncResult
		if err := json.Unmarshal(waitFile(t, p, time.Second, nil), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	edit := func(h mhost, name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(h.dir, "memory", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	memFile := func(h mhost, name string) string {
		b, _ := os.ReadFile(filepath.Join(h.dir, "memory", name))
		return string(b)
	}
	for _, h := range hosts { // the cut-off host is behind: all start level
		if r := sync(h, nil); r.Error != "" {
			t.Fatalf("%s's first sync: %s", h.name, r.Error)
		}
	}

	// Two syncs started while a dream holds the lock both wait and land.
	edit(hosts[0], "laptop.md", "# Laptop\n\n- the laptop's note\n")
	edit(hosts[1], "desktop.md", "# Desktop\n\n- the desktop's note\n")
	holder := run(hosts[2], "hold", map[string]string{"HOLD": "3s"})
	waitFile(t, filepath.Join(hosts[2].dir, "holding"), time.Minute, holder)
	p0, p1 := run(hosts[0], "sync", nil), run(hosts[1], "sync", nil)
	holder.wait(t, time.Minute)
	p0.wait(t, 2*time.Minute)
	p1.wait(t, 2*time.Minute)
	holds, err := readAttempts(filepath.Join(hosts[2].dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	held := holds[len(holds)-1]
	for _, h := range hosts[:2] {
		var r syncResult
		if err := json.Unmarshal(waitFile(t, filepath.Join(h.dir, "sync.json"), time.Second, nil), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != "" || r.Report.Pushed == 0 || !r.Start.Before(held.End) {
			t.Errorf("%s's sync beside the held lock (dream ended %s): %+v", h.name, held.End.Format(time.StampMilli), r)
		}
	}
	if held.Status != "completed" {
		t.Errorf("the holding dream: %+v", held)
	}
	files := remoteGit(t, bare, "ls-tree", "--name-only", sharedBranch)
	if !strings.Contains(files, "laptop.md") || !strings.Contains(files, "desktop.md") {
		t.Fatalf("after the parallel syncs the remote holds:\n%s", files)
	}
	t.Logf("parallel syncs: both landed after waiting for %s's dream", hosts[2].name)

	// A same-line conflict, then the hand merge.
	for _, h := range hosts[:2] {
		if r := sync(h, nil); r.Error != "" {
			t.Fatalf("%s levels: %s", h.name, r.Error)
		}
	}
	base := memFile(hosts[0], "prefs.md")
	edit(hosts[0], "prefs.md", strings.Replace(base, "回答用中文", "回答用英文", 1))
	edit(hosts[1], "prefs.md", strings.Replace(base, "回答用中文", "回答用日文", 1))
	if r := sync(hosts[0], nil); r.Error != "" {
		t.Fatal(r.Error)
	}
	r := sync(hosts[1], nil)
	if !strings.Contains(r.Error, "prefs.md") || !strings.Contains(r.Error, "dream sync --resolved") {
		t.Fatalf("the conflicting sync: %+v", r)
	}
	merged := strings.Replace(base, "回答用中文", "回答用英文，术语附日文", 1)
	edit(hosts[1], "prefs.md", merged)
	if r := sync(hosts[1], map[string]string{"RESOLVED": "1"}); r.Error != "" || !slices.Equal(r.Report.Pulled.Resolved, []string{"prefs.md"}) {
		t.Fatalf("the hand merge: %+v", r)
	}
	if r := sync(hosts[0], nil); r.Error != "" || memFile(hosts[0], "prefs.md") != merged {
		t.Fatalf("the other host after the hand merge: %+v\n%s", r, memFile(hosts[0], "prefs.md"))
	}
	t.Log("hand merge: refused with the command, accepted with --resolved, on both hosts")

	// A push the remote refuses after a dream landed.
	remoteGit(t, bare, "config", "http.receivepack", "false")
	run(hosts[0], "hold", map[string]string{"HOLD": "1ms"}).wait(t, 2*time.Minute)
	as, err := readAttempts(filepath.Join(hosts[0].dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if a := as[len(as)-1]; a.Status != "completed" || !strings.Contains(a.Sync, "not pushed") {
		t.Fatalf("a dream whose push was refused: %+v", a)
	}
	if s, _ := probe(hosts[0])["sync"].(map[string]any); s["next"] != "push" || s["ahead"] == float64(0) {
		t.Errorf("status after the refused push: %v", s)
	}
	remoteGit(t, bare, "config", "http.receivepack", "true")
	if r := sync(hosts[0], nil); r.Error != "" || r.Report.Pushed == 0 {
		t.Fatalf("the sync once the remote takes pushes: %+v", r)
	}
	t.Log("failed push: reported by the dream, pushed by the next sync")

	// An admin purges a file and force-pushes.
	edit(hosts[0], "secret.md", "the staging password is hunter2\n")
	if r := sync(hosts[0], nil); r.Error != "" {
		t.Fatal(r.Error)
	}
	if r := sync(hosts[1], nil); r.Error != "" || memFile(hosts[1], "secret.md") == "" {
		t.Fatalf("the second host's pull of secret.md: %+v", r)
	}
	purge(t, bare, "secret.md")
	r = sync(hosts[1], nil)
	if !strings.Contains(r.Error, "rewritten") || !strings.Contains(r.Error, "dream sync --adopt-remote") || memFile(hosts[1], "secret.md") == "" {
		t.Fatalf("sync from the force-pushed remote: %+v", r)
	}
	r = sync(hosts[1], map[string]string{"ADOPT": "1"})
	if r.Error != "" || !strings.HasPrefix(r.Report.Pulled.Backup, "refs/dream/backup/") || memFile(hosts[1], "secret.md") != "" {
		t.Fatalf("adopting the remote's history: %+v", r)
	}
	if files := remoteGit(t, bare, "log", "--all", "--name-only", "--format="); strings.Contains(files, "secret.md") {
		t.Fatal("the purged file is back on the remote")
	}
	t.Log("force push: refused, then adopted with a backup ref")
}

// purge removes file from the shared branch's whole history the way an
// admin would (filter-branch in a clone) and force-pushes it.
func purge(t *testing.T, bare, file string) {
	t.Helper()
	work := filepath.Join(t.TempDir(), "admin")
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH=" + os.Getenv("PATH"), "FILTER_BRANCH_SQUELCH_WARNING=1",
		"GIT_AUTHOR_NAME=admin", "GIT_AUTHOR_EMAIL=admin@example.org", "GIT_COMMITTER_NAME=admin", "GIT_COMMITTER_EMAIL=admin@example.org"}
	for _, args := range [][]string{
		{"clone", "-q", "-b", sharedBranch, bare, work},
		{"-C", work, "filter-branch", "-f", "--index-filter", "git rm -q --cached --ignore-unmatch " + file, "HEAD"},
		{"-C", work, "push", "-q", "--force", "origin", "HEAD:refs/heads/" + sharedBranch},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}
