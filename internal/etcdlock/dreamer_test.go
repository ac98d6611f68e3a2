package etcdlock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/etcdtest"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// losingLock is the real etcd backend whose lease is revoked right after it
// is acquired when armed: what another machine sees when this holder was
// paused past its TTL. CheckOwner is forwarded so undo and pull take the
// same path as with the bare backend.
type losingLock struct {
	*Lock
	armed bool
	lose  func()
}

func (l *losingLock) TryAcquire() (time.Time, error) {
	prior, err := l.Lock.TryAcquire()
	if err == nil && l.armed {
		l.lose()
	}
	return prior, err
}

// etcdDreamer is a Dreamer with lock = etcd on srv, wired as the dream
// command wires it; wrap, if set, sees the etcd lock Open built.
func etcdDreamer(t *testing.T, srv *etcdtest.Server, mem, state string, r dream.Runner, wrap func(*Lock) dream.Lock) *dream.Dreamer {
	t.Helper()
	s := settings.DreamDefaults()
	s.Lock = settings.LockEtcd
	s.EtcdEndpoints = []string{srv.URL}
	d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: r,
		OpenLock: func(cfg dream.Config, file dream.Lock) (dream.Lock, error) {
			l, err := Open(cfg, file)
			if err != nil || wrap == nil {
				return l, err
			}
			return wrap(l.(*Lock)), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
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
	var ll *losingLock
	d := etcdDreamer(t, srv, mem, state, &runner.Offline{}, func(l *Lock) dream.Lock {
		ll = &losingLock{Lock: l, lose: revokeAll}
		return ll
	})
	rep, err := d.Run(ctx, dream.RunOptions{Review: true})
	if err != nil || rep.Status != dream.StatusStaged {
		t.Fatalf("%+v %v", rep, err)
	}
	before := readPrefs(t, mem)
	last, err := ll.LastConsolidatedAt()
	if err != nil {
		t.Fatal(err)
	}

	ll.armed = true
	if _, _, err := d.Apply(ctx, rep.TaskID); !errors.Is(err, lock.ErrFenced) {
		t.Fatalf("apply with a lost lease: %v, want ErrFenced", err)
	}
	if readPrefs(t, mem) != before {
		t.Fatal("a fenced apply changed the memory")
	}
	if now, err := ll.LastConsolidatedAt(); err != nil || !now.Equal(last) {
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
	if _, err := d.Undo(ctx, rep.TaskID, false); !errors.Is(err, lock.ErrFenced) {
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

// TestEtcdPrefixPerMemory: with lock = etcd and no lock_prefix, two
// projects get two locks and two last consolidation times, and one project
// on two machines gets one.
func TestEtcdPrefixPerMemory(t *testing.T) {
	srv := etcdtest.Start(t, "127.0.0.1")
	root := t.TempDir()
	laptop, desk := filepath.Join(root, "Users", "ann"), filepath.Join(root, "home", "ann")
	machine := func(home, rel string) *Lock {
		mem := filepath.Join(home, rel)
		if err := os.MkdirAll(mem, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("HOME", home)
		var l *Lock
		etcdDreamer(t, srv, mem, filepath.Join(home, ".local", "state", "dream"), &runner.Offline{}, func(el *Lock) dream.Lock {
			l = el
			return el
		})
		return l
	}
	api := machine(laptop, "src/api/memory")
	web := machine(laptop, "src/web/memory")
	apiDesk := machine(desk, "src/api/memory")
	if api.Prefix() == web.Prefix() {
		t.Fatalf("two projects share the etcd prefix %s", api.Prefix())
	}
	if api.Prefix() != apiDesk.Prefix() {
		t.Fatalf("one project on two machines: prefixes %s and %s", api.Prefix(), apiDesk.Prefix())
	}
	// The locks really are apart: the api project's holder does not
	// block the web project, and does block the api project's other machine.
	prior, err := api.TryAcquire()
	if err != nil {
		t.Fatal(err)
	}
	defer api.Rollback(prior)
	webPrior, err := web.TryAcquire()
	if err != nil {
		t.Fatalf("the web project is blocked by the api project's lock: %v", err)
	}
	web.Rollback(webPrior)
	if _, err := apiDesk.TryAcquire(); err == nil {
		t.Fatal("the api project's second machine took the lock its first machine holds")
	}
}
