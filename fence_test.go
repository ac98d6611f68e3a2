package dream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dreamkit/dream/internal/etcdtest"
	"github.com/dreamkit/dream/internal/lockbackend"
	"github.com/dreamkit/dream/internal/settings"
)

// losingLock is the real etcd backend whose lease is revoked right after it
// is acquired when armed: what another machine sees when this holder was
// paused past its TTL. CheckOwner is forwarded so undo and pull take the
// same path as with the bare backend.
type losingLock struct {
	lockbackend.Backend
	armed bool
	lose  func()
}

func (l *losingLock) Acquire(ctx context.Context) (*lockbackend.Held, error) {
	h, err := l.Backend.Acquire(ctx)
	if err == nil && l.armed {
		l.lose()
	}
	return h, err
}

func (l *losingLock) CheckOwner(ctx context.Context) error {
	return l.Backend.(ownerChecker).CheckOwner(ctx)
}

// TestLostLeaseLandsNothing: with lock = etcd, an apply or an undo whose
// lease expired after it took the lock is fenced before any file lands, and
// the time gate stays where it was.
func TestLostLeaseLandsNothing(t *testing.T) {
	srv := etcdtest.Start(t, "127.0.0.1")
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.URL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	revokeAll := func() {
		ls, err := cli.Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls.Leases {
			if _, err := cli.Revoke(ctx, l.ID); err != nil {
				t.Fatal(err)
			}
		}
	}

	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	for name, body := range map[string]string{
		"MEMORY.md": "# Memory\n\n- [偏好](prefs.md) — 习惯\n",
		"prefs.md":  "# 偏好\n\n## Go\n\n- 用 tab 缩进。\n- Run `go vet` before committing.\n- 用 tab 缩进。\n",
	} {
		if err := os.MkdirAll(mem, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mem, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := DefaultSettings()
	s.StateDir = state
	s.Lock = settings.LockEtcd
	s.EtcdEndpoints = []string{srv.URL}
	d, err := New(Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: offlineEngine{}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rep, err := d.Run(ctx, RunOptions{Review: true})
	if err != nil || rep.Status != StatusStaged {
		t.Fatalf("%+v %v", rep, err)
	}
	ll := &losingLock{Backend: d.lock, lose: revokeAll}
	d.lock = ll
	before := readPrefs(t, mem)
	last, err := d.lock.LastConsolidatedAt()
	if err != nil {
		t.Fatal(err)
	}

	ll.armed = true
	if _, _, err := d.Apply(ctx, rep.TaskID); !errors.Is(err, lockbackend.ErrFenced) {
		t.Fatalf("apply with a lost lease: %v, want ErrFenced", err)
	}
	if readPrefs(t, mem) != before {
		t.Fatal("a fenced apply changed the memory")
	}
	if now, err := d.lock.LastConsolidatedAt(); err != nil || !now.Equal(last) {
		t.Fatalf("a fenced apply moved the time gate: %v -> %v (%v)", last, now, err)
	}

	ll.armed = false
	if _, _, err := d.Apply(ctx, rep.TaskID); err != nil {
		t.Fatalf("apply with the lease held: %v", err)
	}
	applied := readPrefs(t, mem)
	if applied == before {
		t.Fatal("the apply changed nothing; the test proves nothing")
	}

	ll.armed = true
	if _, err := d.Undo(ctx, rep.TaskID, false); !errors.Is(err, lockbackend.ErrFenced) {
		t.Fatalf("undo with a lost lease: %v, want ErrFenced", err)
	}
	if readPrefs(t, mem) != applied {
		t.Fatal("a fenced undo changed the memory")
	}
	ll.armed = false
	if _, err := d.Undo(ctx, rep.TaskID, false); err != nil || readPrefs(t, mem) != before {
		t.Fatalf("undo with the lease held: %v", err)
	}
}

func readPrefs(t *testing.T, mem string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mem, "prefs.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
