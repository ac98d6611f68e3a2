package multihost

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/etcdtest"
)

type rig struct {
	etcd   *etcdtest.Server
	remote string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	return &rig{etcd: etcdtest.Start(t, "127.0.0.1"), remote: remote}
}

type host struct {
	name   string
	mem    string
	runner *hostRunner
	d      *dream.Dreamer
}

func (g *rig) host(t *testing.T, name string, seed bool, ttl time.Duration) *host {
	t.Helper()
	dir := t.TempDir()
	h := &host{name: name, mem: filepath.Join(dir, "memory"), runner: &hostRunner{host: name}}
	if err := os.MkdirAll(h.mem, 0o755); err != nil {
		t.Fatal(err)
	}
	if seed {
		if err := writeSeed(h.mem); err != nil {
			t.Fatal(err)
		}
	}
	d, err := newHostDreamer(h.mem, filepath.Join(dir, "state"), g.etcd.URL, g.remote, ttl, h.runner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	h.d = d
	return h
}

func TestInProcessRacingHosts(t *testing.T) {
	needMultiHost(t)
	g := newRig(t)
	first := g.host(t, "seed", true, 10*time.Second)
	if a := runOnce(context.Background(), first.d, first.runner); a.Status != "completed" {
		t.Fatalf("seeding dream: %+v", a)
	}
	hosts := []*host{g.host(t, "laptop", false, 10*time.Second), g.host(t, "desktop", false, 10*time.Second), g.host(t, "devbox", false, 10*time.Second)}
	const wins = 4 // dreams each host lands; losing attempts are bounded below
	var mu sync.Mutex
	var all []attempt
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for won, tries := 0, 0; won < wins && tries < 1000; tries++ {
				a := runOnce(context.Background(), h.d, h.runner)
				mu.Lock()
				all = append(all, a)
				mu.Unlock()
				if a.Status == "completed" {
					won++
					time.Sleep(5 * time.Millisecond) // let the others in
				} else {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	landed, other, _ := split(all)
	t.Log(summary(all))
	for _, a := range other {
		t.Errorf("unexpected failure: %+v", a)
	}
	if len(landed) < len(hosts)*wins {
		t.Fatalf("only %d dreams landed, want %d", len(landed), len(hosts)*wins)
	}
	checkNoOverlap(t, landed, 1)
	checkRemoteHistory(t, g.remote, landed, other)

	// status shows the backend and the remote.
	s, err := hosts[0].d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.LockBackend.Backend != "etcd" || s.Sync == nil || !strings.Contains("in sync|behind|nothing local", s.Sync.State) {
		t.Fatalf("status: backend %+v sync %+v", s.LockBackend, s.Sync)
	}
}

// TestInProcessFencing: the holder's lease is revoked mid-dream (as etcd
// does when a paused holder's TTL runs out); another host takes the lock
// and lands a dream; the first one's commit is refused by the fenced
// transaction and nothing of it lands, here or on the remote.
func TestInProcessFencing(t *testing.T) {
	needMultiHost(t)
	g := newRig(t)
	a := g.host(t, "paused", true, 10*time.Second)
	b := g.host(t, "other", false, 10*time.Second)
	if r := runOnce(context.Background(), a.d, a.runner); r.Status != "completed" {
		t.Fatalf("seed: %+v", r)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{g.etcd.URL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	aLast := lastOf(t, a.d)
	before := readMem(t, a.mem)

	var bResult attempt
	a.runner.hold = func(ctx context.Context) error {
		// The lease dies under the running dream...
		resp, err := cli.Get(ctx, "/dream/", clientv3.WithPrefix())
		if err != nil {
			return err
		}
		for _, kv := range resp.Kvs {
			if kv.Lease != 0 && strings.Contains(string(kv.Key), "/lock/") {
				if _, err := cli.Revoke(ctx, clientv3.LeaseID(kv.Lease)); err != nil {
					return err
				}
			}
		}
		// ...and another machine dreams meanwhile.
		bResult = runOnce(ctx, b.d, b.runner)
		return nil
	}
	ar := runOnce(context.Background(), a.d, a.runner)
	if bResult.Status != "completed" {
		t.Fatalf("the other host could not dream after the lease expired: %+v", bResult)
	}
	if ar.Status != "failed" || !strings.Contains(ar.Error, "fenced") {
		t.Fatalf("the fenced dream: %+v, want failed and fenced", ar)
	}
	if got := readMem(t, a.mem); got != before {
		t.Fatal("the fenced dream changed the memory")
	}
	if got := lastOf(t, a.d); !got.After(aLast) {
		t.Fatalf("time gate %v, want the other host's completion after %v", got, aLast)
	}
	checkRemoteHistory(t, g.remote, []attempt{bResult}, []attempt{ar})
}

// TestInProcessPullConflict: a hand edit here and a change on the remote to
// the same line stop the dream before it starts, with the memory and the
// time gate untouched.
func TestInProcessPullConflict(t *testing.T) {
	needMultiHost(t)
	g := newRig(t)
	a := g.host(t, "a", true, 10*time.Second)
	b := g.host(t, "b", false, 10*time.Second)
	runOnce(context.Background(), a.d, a.runner)
	runOnce(context.Background(), b.d, b.runner)
	if err := os.WriteFile(filepath.Join(b.mem, "prefs.md"), []byte("# 用户偏好\n\n- 回答用英文\n- Prefers table tests\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := b.d.Sync(context.Background(), dream.SyncOptions{}); err != nil || rep.Pushed == 0 {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	if err := os.WriteFile(filepath.Join(a.mem, "prefs.md"), []byte("# 用户偏好\n\n- 回答用日文\n- Prefers table tests\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, last := readMem(t, a.mem), lastOf(t, a.d)
	r := runOnce(context.Background(), a.d, a.runner)
	if r.Status != "failed" || !strings.Contains(r.Error, "conflicts") || !strings.Contains(r.Error, "prefs.md") {
		t.Fatalf("dream over a conflict: %+v", r)
	}
	if r.Seen != 0 || r.Start != (time.Time{}) {
		t.Fatal("the runner ran despite the conflict")
	}
	if readMem(t, a.mem) != before || !lastOf(t, a.d).Equal(last) {
		t.Fatal("a conflicting pull changed the memory or the time gate")
	}
}

func lastOf(t *testing.T, d *dream.Dreamer) time.Time {
	t.Helper()
	s, err := d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.LastConsolidatedAt == nil {
		return time.Time{}
	}
	return *s.LastConsolidatedAt
}

// readMem is every memory file's content, in one string for comparison.
func readMem(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == ".consolidate-lock" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sb.WriteString(e.Name() + "\n" + string(b) + "\n")
	}
	return sb.String()
}
