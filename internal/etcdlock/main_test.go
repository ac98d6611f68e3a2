package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/etcdtest"
	"github.com/dreamkit/dream/internal/lock"
)

// server is one embedded etcd for the package: starting one costs about a
// second, and each test works under its own key prefix. The first test that
// needs it starts it (etcdURL), not TestMain: goroutines started before
// m.Run race with the testing package, which swaps os.Stderr when it runs
// under go test -json.
var (
	serverOnce sync.Once
	serverDir  string
	server     *etcdtest.Server
	serverErr  error
)

func etcdURL(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() {
		serverDir, serverErr = os.MkdirTemp("", "etcdlock-test-")
		if serverErr == nil {
			server, serverErr = etcdtest.StartIn(serverDir, "127.0.0.1")
		}
	})
	if serverErr != nil {
		t.Fatalf("embedded etcd: %v", serverErr)
	}
	return server.URL
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		server.Close()
	}
	if serverDir != "" {
		os.RemoveAll(serverDir)
	}
	os.Exit(code)
}

var prefixSeq atomic.Int64

// machine is one simulated host: its own memory dir and state dir (as on a
// separate machine sharing the memory through git), one etcd.
type machine struct {
	mem   string
	guard string
	lock  *Lock
}

func newMachine(t testing.TB, prefix, host string, ttl time.Duration) *machine {
	t.Helper()
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	guard := filepath.Join(dir, "state", "guard.flock")
	fl := dream.FileLock(mem, guard)
	l, err := New(Config{Endpoints: []string{etcdURL(t)}, Prefix: prefix, TTL: ttl, Host: host}, fl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &machine{mem: mem, guard: guard, lock: l}
}

func newPrefix(t testing.TB) string {
	return fmt.Sprintf("/dream-test/%s-%d/", t.Name(), prefixSeq.Add(1))
}

func mustLast(t *testing.T, l *Lock) time.Time {
	t.Helper()
	at, err := l.LastConsolidatedAt()
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// waitAcquire retries TryAcquire until it wins or the deadline passes.
func waitAcquire(t *testing.T, l *Lock, within time.Duration) (time.Time, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		prior, err := l.TryAcquire()
		if err == nil {
			return prior, time.Since(start)
		}
		if !errors.Is(err, lock.ErrHeld) {
			t.Fatalf("TryAcquire: %v", err)
		}
		if time.Since(start) > within {
			t.Fatalf("still held after %s: %v", within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var bg = context.Background()
