package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSyncEvery is the interval the tests inject: short enough that a test
// sees many rounds, long enough that a round of two dirs' git fits in it
// on a loaded machine most of the time (a late round only drops ticks).
const testSyncEvery = 200 * time.Millisecond

func bareRemote(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", path)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
}

// counter reads one series (every series when label is empty) of the daemon's registry, as a scrape would.
func counter(t *testing.T, d *Daemon, name, label, value string) float64 {
	t.Helper()
	fams, err := d.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" {
				sum += m.GetCounter().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// lockedBuffer is a log sink the daemon's goroutines write concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestIntervalSyncCarriesEditsAcrossMemoryDirs: two memory dirs share one
// bare remote, as two machines would. The daemon's interval sync alone
// carries alpha's memory into beta's empty dir, then a hand edit, then a
// dream's change; it never syncs a dir while a dream runs on it (the
// sync is held off and counted as skipped, and neither the sync nor the
// dream ever meets the other on the consolidation lock).
func TestIntervalSyncCarriesEditsAcrossMemoryDirs(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "memory.git")
	bareRemote(t, remote)
	a := newProject(t, root, "alpha")
	b := project{mem: filepath.Join(root, "beta", "memory"), sessions: filepath.Join(root, "beta", "sessions")}
	for _, dir := range []string{b.mem, b.sessions} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder(1500 * time.Millisecond)
	logs := &lockedBuffer{}
	h := startDaemonLogging(t, root, rec, 2, 300*time.Millisecond, []project{a, b}, func(c *Config) {
		c.SyncInterval = testSyncEvery
		c.Dream.SyncRemote = remote
		// alpha and beta stand for one memory on two machines: each memory
		// has its own branch on a remote (derived from its path under
		// $HOME), so the two name the same branch, as two machines do.
		c.Dream.SyncBranch = "dream/team-memory"
	}, slog.New(slog.NewJSONHandler(logs, nil)))

	same := func(name string) func() bool {
		return func() bool {
			got := readText(t, filepath.Join(b.mem, name))
			return got != "" && got == readText(t, filepath.Join(a.mem, name))
		}
	}
	// 1. alpha's first sync pushes its memory; beta's pulls it.
	for _, name := range []string{"MEMORY.md", "build.md", "prefs.md"} {
		waitUntil(t, 30*time.Second, "beta to receive alpha's "+name, same(name))
	}

	// 2. A hand edit on alpha reaches beta with no command run.
	prefs := readText(t, filepath.Join(a.mem, "prefs.md")) + "- 代码评审前先跑 staticcheck。\n"
	writeFile(t, filepath.Join(a.mem, "prefs.md"), prefs)
	waitUntil(t, 30*time.Second, "beta to receive alpha's hand edit", func() bool {
		return readText(t, filepath.Join(b.mem, "prefs.md")) == prefs
	})

	// 3. A dream on alpha: every tick during it leaves alpha alone.
	var mu sync.Mutex
	var overlaps, checks int
	rec.mu.Lock()
	rec.during = func(mem string) {
		h.d.mu.Lock()
		tg := h.d.targets[mem]
		syncing := tg != nil && tg.syncing
		h.d.mu.Unlock()
		mu.Lock()
		checks++
		if syncing {
			overlaps++
		}
		mu.Unlock()
	}
	rec.mu.Unlock()
	skippedBefore := counter(t, h.d, "dream_sync_total", "result", syncSkipped)
	touchSessions(t, a, 3)
	waitUntil(t, 60*time.Second, "the dream's change to reach beta", func() bool {
		return strings.Contains(readText(t, filepath.Join(b.mem, "build.md")), "Releases are cut on Tuesdays")
	})
	if count, _, _ := rec.snapshot(); count[a.mem] != 1 {
		t.Fatalf("alpha dreamt %d times, want 1", count[a.mem])
	}
	mu.Lock()
	if checks != 2 || overlaps != 0 {
		t.Errorf("%d of %d checks inside the dream found alpha being synced", overlaps, checks)
	}
	mu.Unlock()
	// A 1.5 s dream spans several 200 ms ticks: each was held off.
	if skipped := counter(t, h.d, "dream_sync_total", "result", syncSkipped) - skippedBefore; skipped < 2 {
		t.Errorf("%v syncs held off during a 1.5 s dream, want at least 2", skipped)
	}
	if n := counter(t, h.d, "dream_lock_contention_total", "", ""); n != 0 {
		t.Errorf("lock contention %v: a sync and a walk met on the lock", n)
	}
	if n := counter(t, h.d, "dream_sync_total", "result", syncError); n != 0 {
		t.Errorf("%v sync errors; logs:\n%s", n, logs)
	}
	if n := counter(t, h.d, "dream_sync_total", "result", syncOK); n < 4 {
		t.Errorf("%v successful syncs, want at least 4", n)
	}
	if n := counter(t, h.d, "dream_sync_commits_total", "direction", "pushed"); n < 2 {
		// The dream pushes its own audit commit; the interval pushed
		// alpha's first memory and the hand edit.
		t.Errorf("%v commits pushed by the interval sync, want at least 2 (first memory, hand edit)", n)
	}
	if !strings.Contains(logs.String(), `"msg":"synced"`) || !strings.Contains(logs.String(), `"pulled":"fast-forward"`) {
		t.Errorf("no sync result logged:\n%s", logs)
	}
	st := h.d.Status()
	if st.SyncInterval != testSyncEvery.String() {
		t.Errorf("status sync_interval %q", st.SyncInterval)
	}
	for _, p := range st.Projects {
		if p.LastSync == nil || p.LastSync.State == "" {
			t.Errorf("%s: last sync %+v", p.MemoryDir, p.LastSync)
		}
	}
}

// TestIntervalSyncUnreachableRemote: a remote that is not there is logged
// and counted on every tick, the daemon keeps running, and once the remote
// exists the next tick pushes.
func TestIntervalSyncUnreachableRemote(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "later.git")
	a := newProject(t, root, "alpha")
	logs := &lockedBuffer{}
	h := startDaemonLogging(t, root, newRecorder(0), 1, time.Hour, []project{a}, func(c *Config) {
		c.SyncInterval = testSyncEvery
		c.Dream.SyncRemote = remote
	}, slog.New(slog.NewJSONHandler(logs, nil)))

	waitUntil(t, 30*time.Second, "three failed syncs", func() bool {
		return counter(t, h.d, "dream_sync_total", "result", syncError) >= 3
	})
	out := logs.String()
	if !strings.Contains(out, `"msg":"sync failed"`) || !strings.Contains(out, `"remote":"`+remote+`"`) || !strings.Contains(out, `"error":"`) {
		t.Fatalf("the failure is not logged with its remote and error:\n%s", out)
	}
	if st := h.d.Status(); len(st.Projects) != 1 || st.Projects[0].LastSync == nil || st.Projects[0].LastSync.Error == "" {
		t.Fatalf("status after failed syncs: %+v", st.Projects)
	}
	if n := counter(t, h.d, "dream_sync_total", "result", syncOK); n != 0 {
		t.Fatalf("%v syncs succeeded against a missing remote", n)
	}

	bareRemote(t, remote)
	waitUntil(t, 30*time.Second, "a sync to succeed once the remote exists", func() bool {
		return counter(t, h.d, "dream_sync_total", "result", syncOK) >= 1
	})
	if n := counter(t, h.d, "dream_sync_commits_total", "direction", "pushed"); n != 1 {
		t.Errorf("pushed %v commits, want 1 (the memory as it stood)", n)
	}
	// The memory's branch is derived from its identity, not "main".
	cmd := exec.Command("git", "--git-dir", remote, "log", "--format=%s", "--all")
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) == 0 {
		t.Errorf("the remote has no history after the sync: %v %s", err, out)
	}
}
