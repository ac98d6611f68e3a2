package etcdlock

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/lock"
)

// cutOff is an endpoint whose link is cut: it accepts connections and
// never answers a byte, so every request waits for its deadline, as on a
// machine whose route to etcd is black-holed.
func cutOff(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String()
}

// TestCutOffFromEtcdAnswersAtOnce: with etcd out of reach, the first look
// gives up after one short probe (not a request timeout per question),
// later looks answer at once, and each says unreachable: the last
// consolidation is an ErrUnreachable error, Describe marks the status
// Unreachable with the local file beside it, Inspect yields (no recovery
// on an unknown lock), and an acquisition fails as unreachable, not held.
func TestCutOffFromEtcdAnswersAtOnce(t *testing.T) {
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	fl := dream.FileLock(mem, filepath.Join(dir, "state", "guard.flock"))
	l, err := New(Config{Endpoints: []string{cutOff(t)}, Prefix: newPrefix(t), TTL: 5 * time.Second, Host: "cut"}, fl)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	start := time.Now()
	_, err = l.LastConsolidatedAt()
	first := time.Since(start)
	if !errors.Is(err, lock.ErrUnreachable) {
		t.Fatalf("last consolidation with etcd cut off: %v, want ErrUnreachable", err)
	}
	if first > ProbeTimeout+time.Second {
		t.Fatalf("the first look took %s, want about the probe's %s", first, ProbeTimeout)
	}
	start = time.Now()
	st, err := l.Describe(bg)
	if err != nil || !st.Unreachable || !st.Held || st.File.Reason == "" {
		t.Fatalf("describe: %+v %v, want unreachable with the file", st, err)
	}
	if h, err := l.Inspect(); err != nil || !h.Held {
		t.Fatalf("inspect: %+v %v, want a live (unknown) holder", h, err)
	}
	if _, err := l.TryAcquire(); !errors.Is(err, lock.ErrUnreachable) || errors.Is(err, lock.ErrHeld) {
		t.Fatalf("acquire: %v, want ErrUnreachable", err)
	}
	if later := time.Since(start); later > 200*time.Millisecond {
		t.Fatalf("three more looks took %s, want them at once", later)
	}
	if _, err := fl.Inspect(); err != nil {
		t.Fatal(err)
	}
	if err := fl.Verify(); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatal("the refused acquisition left the file lock taken")
	}
}
