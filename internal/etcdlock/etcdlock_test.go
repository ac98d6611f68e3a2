package etcdlock

import (
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/lock"
)

func TestCompleteMovesGateRollbackDoesNot(t *testing.T) {
	p := newPrefix(t)
	a := newMachine(t, p, "laptop", 5*time.Second)
	b := newMachine(t, p, "desktop", 5*time.Second)

	if got := mustLast(t, a.lock); !got.IsZero() {
		t.Fatalf("fresh prefix: last = %v, want zero", got)
	}
	prior, err := a.lock.TryAcquire()
	if err != nil || !prior.IsZero() {
		t.Fatalf("first acquire: prior %v, err %v", prior, err)
	}
	if err := a.lock.SetTask(bg, "20260101-000000-abcd"); err != nil {
		t.Fatal(err)
	}
	// The other machine is excluded, and told who holds.
	_, err = b.lock.TryAcquire()
	if !errors.Is(err, lock.ErrHeld) || !strings.Contains(err.Error(), "laptop") || !strings.Contains(err.Error(), "20260101-000000-abcd") {
		t.Fatalf("second machine: err = %v, want ErrHeld naming laptop and its task", err)
	}
	// ...and so is another dream process on the holder's machine that
	// uses the file lock alone (same memory dir, same guard).
	plain := lock.New(a.mem, a.guard)
	if _, err := plain.TryAcquire(); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("file lock beside an etcd holder: err = %v, want ErrHeld", err)
	}
	before := time.Now()
	if err := a.lock.Complete(); err != nil {
		t.Fatal(err)
	}
	first := mustLast(t, b.lock)
	if first.Before(before.Add(-time.Second)) {
		t.Fatalf("after Complete: last = %v, want about %v", first, before)
	}
	// The holder's file lock recorded the completion too (its mtime), for
	// the agents that read only the file.
	if fi, err := os.Stat(a.mem + "/" + lock.FileName); err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("file lock after Complete: %v %v", fi, err)
	}

	prior, err = b.lock.TryAcquire()
	if err != nil || !prior.Equal(first) {
		t.Fatalf("next acquire: prior %v err %v, want %v", prior, err, first)
	}
	if err := b.lock.Rollback(prior); err != nil {
		t.Fatal(err)
	}
	if got := mustLast(t, a.lock); !got.Equal(first) {
		t.Fatalf("after Rollback: last = %v, want unchanged %v", got, first)
	}
	// Rollback after Fence takes the recorded completion back.
	if _, err := b.lock.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	if err := b.lock.Fence(bg); err != nil {
		t.Fatal(err)
	}
	if got := mustLast(t, a.lock); got.Equal(first) {
		t.Fatal("Fence did not record the completion")
	}
	if err := b.lock.Rollback(first); err != nil {
		t.Fatal(err)
	}
	if got := mustLast(t, a.lock); !got.Equal(first) {
		t.Fatalf("Rollback after Fence: last = %v, want %v", got, first)
	}
}

// TestFencingPausedHolder is the case fencing exists for: a holder stops
// renewing its lease (a paused process: here its keepalive is orphaned, as
// when SIGSTOP freezes it), the lease expires, another machine takes the
// lock and completes a dream; when the first one "wakes" it must not record
// its completion nor move the time gate.
func TestFencingPausedHolder(t *testing.T) {
	p := newPrefix(t)
	ttl := 2 * time.Second
	a := newMachine(t, p, "paused", ttl)
	b := newMachine(t, p, "other", ttl)

	if _, err := a.lock.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	a.lock.mu.Lock()
	a.lock.session.Orphan() // stop the keepalive: the process is frozen
	a.lock.mu.Unlock()

	_, waited := waitAcquire(t, b.lock, 4*ttl)
	if waited < ttl/2 {
		t.Fatalf("took over after %s, before the lease could expire (ttl %s)", waited, ttl)
	}
	if err := b.lock.Complete(); err != nil {
		t.Fatal(err)
	}
	bLast := mustLast(t, b.lock)

	// The paused holder wakes up and tries to land its dream.
	err := a.lock.Fence(bg)
	if !errors.Is(err, lock.ErrFenced) || !strings.Contains(err.Error(), "revision") {
		t.Fatalf("Fence after the lease expired: %v, want ErrFenced naming the revision", err)
	}
	if err := a.lock.Rollback(time.Time{}); err != nil && !strings.Contains(err.Error(), "releasing") {
		t.Fatalf("Rollback: %v", err)
	}
	if got := mustLast(t, b.lock); !got.Equal(bLast) {
		t.Fatalf("the fenced holder moved the gate: %v, want %v", got, bLast)
	}
	// Complete without Fence fences as well.
	if _, err := a.lock.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	a.lock.mu.Lock()
	a.lock.session.Orphan()
	a.lock.mu.Unlock()
	time.Sleep(ttl + time.Second)
	if _, err := b.lock.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	if err := a.lock.Complete(); !errors.Is(err, lock.ErrFenced) {
		t.Fatalf("Complete after the lease expired: %v, want ErrFenced", err)
	}
	if err := b.lock.Rollback(bLast); err != nil {
		t.Fatal(err)
	}
	if got := mustLast(t, b.lock); !got.Equal(bLast) {
		t.Fatalf("gate moved: %v, want %v", got, bLast)
	}
}

// TestCrashedHolderTakeover: a holder that never releases (crashed) blocks
// others exactly until its lease TTL, and the prior they get is the last
// completed consolidation, not the crashed dream's start.
func TestCrashedHolderTakeover(t *testing.T) {
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
	done := mustLast(t, a.lock)
	if _, err := a.lock.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	a.lock.mu.Lock()
	a.lock.session.Orphan()
	a.lock.session, a.lock.mutex = nil, nil // forgotten, as by a dead process
	a.lock.mu.Unlock()

	st, err := b.lock.Describe(bg)
	if err != nil || !st.Held || st.Host != "crashes" || st.LeaseRemaining == nil || *st.LeaseRemaining > ttl {
		t.Fatalf("Describe while the crashed holder's lease runs: %+v %v", st, err)
	}
	prior, waited := waitAcquire(t, b.lock, 4*ttl)
	if waited < ttl/2 {
		t.Fatalf("took over after %s, before the TTL %s", waited, ttl)
	}
	if !prior.Equal(done) {
		t.Fatalf("prior after takeover = %v, want the last completion %v", prior, done)
	}
	if err := b.lock.Rollback(prior); err != nil {
		t.Fatal(err)
	}
}

// TestRacingMachines: many machines race for one memory's lock; at most one
// is ever inside, and every completion is recorded.
func TestRacingMachines(t *testing.T) {
	p := newPrefix(t)
	const hosts, rounds = 4, 25
	var inside, maxInside, completed atomic.Int32
	var wg sync.WaitGroup
	ms := make([]*machine, hosts)
	for i := range ms {
		ms[i] = newMachine(t, p, "host"+string(rune('a'+i)), 5*time.Second)
	}
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				prior, err := m.lock.TryAcquire()
				if errors.Is(err, lock.ErrHeld) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for {
					old := maxInside.Load()
					if n <= old || maxInside.CompareAndSwap(old, n) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				if completed.Load()%2 == 0 {
					err = m.lock.Complete()
					completed.Add(1)
				} else {
					err = m.lock.Rollback(prior)
					completed.Add(1)
				}
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if maxInside.Load() > 1 {
		t.Fatalf("%d holders inside at once", maxInside.Load())
	}
	if completed.Load() == 0 {
		t.Fatal("no round ever won the lock")
	}
	t.Logf("%d rounds held the lock, %d lost the race", completed.Load(), hosts*rounds-int(completed.Load()))
}

func TestUnreachableEtcdIsNotFree(t *testing.T) {
	dir := t.TempDir()
	fl := dream.FileLock(dir, dir+"/guard")
	l, err := New(Config{Endpoints: []string{"127.0.0.1:1"}, Prefix: "/x/", TTL: time.Second, DialTimeout: 200 * time.Millisecond, OpTimeout: 300 * time.Millisecond}, fl)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := l.Inspect()
	if err != nil || !h.Held || !strings.Contains(h.Reason, "unreachable") {
		t.Fatalf("Inspect with etcd down: %+v %v, want live (unknown) and unreachable", h, err)
	}
	if _, err := l.TryAcquire(); err == nil || errors.Is(err, lock.ErrHeld) {
		t.Fatalf("TryAcquire with etcd down: %v, want a connection error", err)
	}
	// The file lock taken first was given back.
	if err := fl.Verify(); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatal("file lock left held after the etcd acquire failed")
	}
}
