package etcdlock

import (
	"testing"
	"time"
)

// TestCrashBetweenFenceAndComplete: a holder that fenced (its pending
// completion is in etcd) and died before Complete does not move the time
// gate: while its lease lives every machine sees the pending time, once the
// lease is gone every machine reads the prior completion again, and the
// next holder gets that prior too.
func TestCrashBetweenFenceAndComplete(t *testing.T) {
	p := newPrefix(t)
	ttl := 2 * time.Second
	a := newMachine(t, p, "crashes", ttl)
	b := newMachine(t, p, "survivor", ttl)
	if _, err := a.lock.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	if err := a.lock.Complete(); err != nil {
		t.Fatal(err)
	}
	done := mustLast(t, b.lock)
	time.Sleep(10 * time.Millisecond) // the pending time must differ from done
	if _, err := a.lock.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	if err := a.lock.Fence(bg); err != nil {
		t.Fatal(err)
	}
	if got := mustLast(t, b.lock); !got.After(done) {
		t.Fatalf("while the fenced holder lives: last = %v, want its pending time after %v", got, done)
	}
	a.lock.mu.Lock()
	a.lock.session.Orphan()
	a.lock.session, a.lock.mutex = nil, nil // dies mid-commit
	a.lock.mu.Unlock()

	prior, _ := waitAcquire(t, b.lock, 4*ttl)
	if !prior.Equal(done) {
		t.Fatalf("prior after the crash = %v, want the last completion %v", prior, done)
	}
	if got := mustLast(t, a.lock); !got.Equal(done) {
		t.Fatalf("last after the crash = %v, want %v", got, done)
	}
	// The survivor completes: its record is final, not pending.
	if err := b.lock.Complete(); err != nil {
		t.Fatal(err)
	}
	final := mustLast(t, a.lock)
	if !final.After(done) {
		t.Fatalf("after the survivor's completion: last = %v", final)
	}
	time.Sleep(ttl + time.Second) // its lease is revoked: the record must not depend on it
	if got := mustLast(t, a.lock); !got.Equal(final) {
		t.Fatalf("a completed record read as pending after its lease ended: %v, want %v", got, final)
	}
}
