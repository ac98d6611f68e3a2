// Package etcdlock is the consolidation lock for several machines sharing
// one memory: an etcd lease held through the client's concurrency package,
// with the last consolidation time kept in etcd beside it, so that every
// machine reads the same time gate instead of its own file's mtime.
//
// Keys under the memory's prefix P:
//
//	P lock/<lease>   the concurrency.Mutex keys; the oldest is the holder. Its
//	                 value names host, PID and task; it dies with the lease.
//	P last           the last completed consolidation: time, host, task.
//
// A holder that crashes or is cut off stops renewing its lease, and etcd
// deletes its key when the TTL runs out: the lock is taken over without
// anyone deciding the holder is dead. "last" is written by the fence just
// before a dream lands, as a pending record naming the holder's lease and
// the prior time, and made final by Complete; a pending record whose lease
// is dead (the holder crashed between the fence and Complete) reads as its
// prior time, so a dream that did not complete never moves the time gate.
//
// Fencing. A lease can expire while its holder still runs: the process was
// paused (SIGSTOP, a laptop lid, a VM migration, a long GC or swap storm) or
// its network was cut, and when it resumes it still believes it holds the
// lock while another machine has taken it and is dreaming on the same
// memory. Checking "do I still hold it?" and then writing is not enough, the
// lease can lapse between the two. So the completion is recorded in one etcd
// transaction whose condition is that the holder's lock key still has the
// create revision it got when it acquired (concurrency.Mutex.IsOwner):
// etcd applies the write only if the lock is still ours at that revision,
// and the dream lands its files only after that transaction succeeded. A
// holder that lost the lock gets ErrFenced, rolls back, and says so.
//
// With etcd the local .consolidate-lock is taken as well (first, because it
// is cheap and local), so agents on this machine that know only the file are
// still excluded.
package etcdlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/lock"
)

// Lock is one memory's etcd lock, plus the local file lock.
type Lock struct {
	cfg    Config
	client *clientv3.Client
	file   dream.Lock

	// base outlives every request: the lease's keepalive runs under it.
	base   context.Context
	cancel context.CancelFunc

	reach reach

	mu        sync.Mutex
	session   *concurrency.Session
	mutex     *concurrency.Mutex
	filePrior time.Time
	priorRaw  []byte // the "last" value before this dream; nil: no key
	ours      []byte // the "last" value Fence wrote; nil: not fenced
	holder    holderRecord
}

// New connects to etcd (lazily: no request is sent until the first call)
// and returns the lock; file is this machine's file lock, taken too.
func New(cfg Config, file dream.Lock) (*Lock, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("%w: no etcd endpoints", ErrConfig)
	}
	if cfg.Prefix == "" || !strings.HasSuffix(cfg.Prefix, "/") {
		return nil, fmt.Errorf("%w: key prefix %q must be non-empty and end with /", ErrConfig, cfg.Prefix)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 60 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = DefaultOpTimeout
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if cfg.PID == 0 {
		cfg.PID = os.Getpid()
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		TLS:         cfg.TLS,
		Username:    cfg.Username,
		Password:    cfg.Password,
		// The client logs reconnects at warn level on stderr; dream reports
		// the errors that matter itself.
		Logger: zap.NewNop(),
		// Fail fast when the holder is cut off rather than hang until the
		// request timeout; keepalive pings notice a dead link.
		DialKeepAliveTime:    2 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	l := &Lock{cfg: cfg, client: c, file: file}
	l.base, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

func (l *Lock) lockPrefix() string { return l.cfg.Prefix + "lock" }
func (l *Lock) lastKey() string    { return l.cfg.Prefix + "last" }

// op bounds one request.
func (l *Lock) op(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, l.cfg.OpTimeout)
}

// ttlSeconds is the lease TTL in whole seconds, rounded up.
func (l *Lock) ttlSeconds() int64 {
	return int64(math.Ceil(l.cfg.TTL.Seconds()))
}

// Path is the endpoints and key prefix.
func (l *Lock) Path() string {
	return strings.Join(l.cfg.Endpoints, ",") + " " + l.cfg.Prefix
}

// Prefix is this memory's key prefix.
func (l *Lock) Prefix() string { return l.cfg.Prefix }

// LastConsolidatedAt reads the last completed consolidation from etcd.
// A value dream did not write reads as "never", the gate's safe side (a
// dream runs; it cannot lose memory).
func (l *Lock) LastConsolidatedAt() (time.Time, error) {
	if err := l.reachable(l.base); err != nil {
		return time.Time{}, fmt.Errorf("reading the last consolidation time: %w", err)
	}
	ctx, cancel := l.op(l.base)
	defer cancel()
	resp, err := l.client.Get(ctx, l.lastKey())
	if err != nil {
		l.failed()
		return time.Time{}, fmt.Errorf("reading the last consolidation time from etcd at %s (lock = etcd; is it running and reachable?): %w", strings.Join(l.cfg.Endpoints, ","), err)
	}
	if len(resp.Kvs) == 0 {
		return time.Time{}, nil
	}
	r, err := parseLast(resp.Kvs[0].Value)
	if err != nil {
		return time.Time{}, nil
	}
	if !r.Pending {
		return r.At, nil
	}
	// A dream between its fence and Complete: its time counts only while
	// its holder lives; a dead lease is a dream that did not complete.
	ttl, err := l.client.TimeToLive(ctx, clientv3.LeaseID(r.Lease))
	if err != nil {
		return time.Time{}, fmt.Errorf("etcd lock: asking whether the pending dream's holder lives: %w", err)
	}
	if ttl.TTL <= 0 {
		return r.Prior, nil
	}
	return r.At, nil
}

// TryAcquire takes the file lock, then the etcd lock, and returns the last
// consolidation time from etcd. errors.Is(err, lock.ErrHeld) when either is
// held by someone else.
func (l *Lock) TryAcquire() (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session != nil {
		return time.Time{}, fmt.Errorf("%w: already held by this process", lock.ErrHeld)
	}
	if err := l.reachable(l.base); err != nil {
		return time.Time{}, err
	}
	filePrior, err := l.file.TryAcquire()
	if err != nil {
		return time.Time{}, err
	}
	prior, err := l.acquireEtcd()
	if err != nil {
		if rbErr := l.file.Rollback(filePrior); rbErr != nil {
			err = errors.Join(err, fmt.Errorf("releasing the file lock: %w", rbErr))
		}
		return time.Time{}, err
	}
	l.filePrior = filePrior
	return prior, nil
}

// acquireEtcd grants a lease, tries the mutex, announces the holder and
// reads "last". On any failure the lease is revoked.
func (l *Lock) acquireEtcd() (time.Time, error) {
	ctx, cancel := l.op(l.base)
	defer cancel()
	// The lease is granted under the request's timeout, but kept alive under
	// base: concurrency.NewSession would tie both to one context.
	grant, err := l.client.Grant(ctx, l.ttlSeconds())
	if err != nil {
		l.failed()
		return time.Time{}, fmt.Errorf("etcd lock: granting a lease: %w", err)
	}
	s, err := concurrency.NewSession(l.client, concurrency.WithLease(grant.ID), concurrency.WithContext(l.base))
	if err != nil {
		l.revoke(grant.ID)
		return time.Time{}, fmt.Errorf("etcd lock: keeping the lease alive: %w", err)
	}
	fail := func(err error) (time.Time, error) {
		s.Orphan()
		l.revoke(grant.ID)
		return time.Time{}, err
	}
	m := concurrency.NewMutex(s, l.lockPrefix())
	if err := m.TryLock(ctx); err != nil {
		if errors.Is(err, concurrency.ErrLocked) {
			who := "another machine"
			if st, derr := l.describeEtcd(ctx); derr == nil && st.Held {
				who = st.Reason
			}
			return fail(fmt.Errorf("%w: etcd lock %s: %s", lock.ErrHeld, l.cfg.Prefix, who))
		}
		return fail(fmt.Errorf("etcd lock: %w", err))
	}
	h := holderRecord{Host: l.cfg.Host, PID: l.cfg.PID, AcquiredAt: time.Now().UTC()}
	body, _ := json.Marshal(h)
	// Put keeps the key's create revision, so ownership is unchanged; the
	// condition makes sure we never resurrect a key whose lease just died.
	resp, err := l.client.Txn(ctx).If(m.IsOwner()).
		Then(clientv3.OpPut(m.Key(), string(body), clientv3.WithLease(s.Lease())), clientv3.OpGet(l.lastKey())).
		Commit()
	if err != nil {
		return fail(fmt.Errorf("etcd lock: announcing the holder: %w", err))
	}
	if !resp.Succeeded {
		return fail(fmt.Errorf("%w: etcd lock lost right after acquiring it", lock.ErrHeld))
	}
	var prior time.Time
	var raw []byte
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		raw = append([]byte{}, kvs[0].Value...)
		if r, err := parseLast(raw); err == nil {
			prior = r.At
			if r.Pending {
				// We own the lock, so that holder lost it before
				// completing: its dream does not count.
				prior = r.Prior
			}
		}
	}
	l.session, l.mutex, l.priorRaw, l.ours, l.holder = s, m, raw, nil, h
	return prior, nil
}

// revoke drops a lease, best effort: if it fails the lease expires by itself.
func (l *Lock) revoke(id clientv3.LeaseID) {
	ctx, cancel := l.op(l.base)
	defer cancel()
	_, _ = l.client.Revoke(ctx, id)
}

// SetTask adds the task id to the holder's key, for other machines' status.
func (l *Lock) SetTask(ctx context.Context, taskID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == nil {
		return lock.ErrNotHeld
	}
	h := l.holder
	h.TaskID = taskID
	body, _ := json.Marshal(h)
	ctx, cancel := l.op(ctx)
	defer cancel()
	resp, err := l.client.Txn(ctx).If(l.mutex.IsOwner()).
		Then(clientv3.OpPut(l.mutex.Key(), string(body), clientv3.WithLease(l.session.Lease()))).Commit()
	if err != nil {
		return fmt.Errorf("etcd lock: naming the task: %w", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: the etcd lock key is gone", lock.ErrFenced)
	}
	l.holder = h
	return nil
}

// Verify is the cheap check a running dream repeats: the file lock is
// still ours, and the lease's keepalive has not given up (the client closes
// the session when the lease expired or could not be renewed within its
// TTL, e.g. with the link cut). It sends nothing to etcd, so calling it
// every second costs nothing; Fence is the authoritative check.
func (l *Lock) Verify() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == nil {
		return lock.ErrNotHeld
	}
	if err := l.file.Verify(); err != nil {
		return err
	}
	select {
	case <-l.session.Done():
		return fmt.Errorf("%w: the etcd lease of %s expired or could not be renewed within %s (fenced: this dream cannot land)",
			lock.ErrLost, l.mutex.Key(), l.cfg.TTL)
	default:
		return nil
	}
}

// CheckOwner proves, with one round trip to etcd, that the lock key still
// has the create revision it got when acquired, without recording anything:
// the fence of a change that lands files but is not a consolidation (an
// undo, a pull), whose time gate must stay where it was. Like Fence, a lost
// lease or an unanswered request is ErrFenced.
func (l *Lock) CheckOwner(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == nil {
		return fmt.Errorf("%w: %w", lock.ErrFenced, lock.ErrNotHeld)
	}
	if err := l.file.Verify(); err != nil {
		return fmt.Errorf("%w: %w", lock.ErrFenced, err)
	}
	ctx, cancel := context.WithTimeout(ctx, min(l.cfg.OpTimeout, l.cfg.TTL))
	defer cancel()
	resp, err := l.client.Txn(ctx).If(l.mutex.IsOwner()).Commit()
	if err != nil {
		return fmt.Errorf("%w: could not confirm ownership with etcd (%v)", lock.ErrFenced, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: the etcd lock key %s no longer has create revision %d (the lease expired: paused or cut off for more than %s)",
			lock.ErrFenced, l.mutex.Key(), l.mutex.Header().GetRevision(), l.cfg.TTL)
	}
	return nil
}

// Fence records the completion in one transaction conditioned on the lock
// key's create revision still being ours (see the package comment). It also
// checks the local file lock first.
func (l *Lock) Fence(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fence(ctx)
}

func (l *Lock) fence(ctx context.Context) error {
	if l.session == nil {
		return fmt.Errorf("%w: %w", lock.ErrFenced, lock.ErrNotHeld)
	}
	if l.ours != nil {
		return nil
	}
	if err := l.file.Fence(ctx); err != nil {
		return err
	}
	rec := lastRecord{At: time.Now().UTC(), Host: l.holder.Host, PID: l.holder.PID, TaskID: l.holder.TaskID,
		Pending: true, Lease: int64(l.session.Lease()), Prior: l.priorAt()}
	body, _ := json.Marshal(rec)
	// A lease is renewed at a third of its TTL, so a request that has not
	// got through within the TTL is from a holder that lost the lease anyway.
	ctx, cancel := context.WithTimeout(ctx, min(l.cfg.OpTimeout, l.cfg.TTL))
	defer cancel()
	// Remember what we (may have) written before sending it: if the answer
	// is lost, Rollback can still take it back.
	l.ours = body
	resp, err := l.client.Txn(ctx).If(l.mutex.IsOwner()).
		Then(clientv3.OpPut(l.lastKey(), string(body))).
		Commit()
	if err != nil {
		return fmt.Errorf("%w: could not confirm ownership with etcd (%v)", lock.ErrFenced, err)
	}
	if !resp.Succeeded {
		l.ours = nil
		return fmt.Errorf("%w: the etcd lock key %s no longer has create revision %d (the lease expired: paused or cut off for more than %s)",
			lock.ErrFenced, l.mutex.Key(), l.mutex.Header().GetRevision(), l.cfg.TTL)
	}
	return nil
}

// Complete fences if Fence was not called, then marks the file lock
// complete and releases both locks.
func (l *Lock) Complete() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == nil {
		return lock.ErrNotHeld
	}
	if err := l.fence(l.base); err != nil {
		return errors.Join(err, l.rollback())
	}
	err := errors.Join(l.finalize(), l.file.Complete())
	return errors.Join(err, l.release())
}

// finalize turns this dream's pending record into a completed one, if it is
// still the current value. If it cannot (etcd unreachable), the record stays
// pending under a lease release revokes: readers take the prior time, the
// safe side (the gate reopens; no memory is lost).
func (l *Lock) finalize() error {
	var rec lastRecord
	if err := json.Unmarshal(l.ours, &rec); err != nil {
		return fmt.Errorf("etcd lock: rereading the pending record: %w", err)
	}
	rec.Pending, rec.Lease, rec.Prior = false, 0, time.Time{}
	body, _ := json.Marshal(rec)
	ctx, cancel := l.op(l.base)
	defer cancel()
	resp, err := l.client.Txn(ctx).If(clientv3.Compare(clientv3.Value(l.lastKey()), "=", string(l.ours))).
		Then(clientv3.OpPut(l.lastKey(), string(body))).Commit()
	if err != nil {
		return fmt.Errorf("etcd lock: recording the completion: %w", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcd lock: the pending completion record was replaced before it was made final")
	}
	return nil
}

// priorAt is the last consolidation time before this dream, from the value
// read when the lock was taken (a dead holder's pending record counts as
// its own prior).
func (l *Lock) priorAt() time.Time {
	r, err := parseLast(l.priorRaw)
	if err != nil {
		return time.Time{}
	}
	if r.Pending {
		return r.Prior
	}
	return r.At
}

// Rollback takes back the completion Fence recorded, if it is still the
// current value (whoever holds the lock now: the value names this dream
// alone), rewinds the file lock, and releases both.
func (l *Lock) Rollback(time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == nil {
		return lock.ErrNotHeld
	}
	return l.rollback()
}

func (l *Lock) rollback() error {
	var errs []error
	if l.ours != nil {
		ctx, cancel := l.op(l.base)
		restore := clientv3.OpDelete(l.lastKey())
		if l.priorRaw != nil {
			restore = clientv3.OpPut(l.lastKey(), string(l.priorRaw))
		}
		_, err := l.client.Txn(ctx).If(clientv3.Compare(clientv3.Value(l.lastKey()), "=", string(l.ours))).Then(restore).Commit()
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("etcd lock: taking back the completion: %w", err))
		}
	}
	if err := l.file.Rollback(l.filePrior); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, l.release())
	return errors.Join(errs...)
}

// release deletes the lock key and revokes the lease. Failures are reported
// but harmless: the lease then expires by itself.
func (l *Lock) release() error {
	s, m := l.session, l.mutex
	l.session, l.mutex, l.ours, l.priorRaw = nil, nil, nil, nil
	if s == nil {
		return nil
	}
	ctx, cancel := l.op(l.base)
	defer cancel()
	s.Orphan()
	err := m.Unlock(ctx)
	if _, rerr := l.client.Revoke(ctx, s.Lease()); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("etcd lock: releasing (the lease expires within %s anyway): %w", l.cfg.TTL, err)
	}
	return nil
}

// Inspect is the local file's holder, marked live when another machine
// holds the etcd lock or etcd cannot be asked (the conservative answer: no
// one recovers or dreams on a lock whose state is unknown).
func (l *Lock) Inspect() (dream.LockHolder, error) {
	h, err := l.file.Inspect()
	if err != nil {
		return h, err
	}
	ctx, cancel := l.op(l.base)
	defer cancel()
	st, err := l.describeEtcd(ctx)
	switch {
	case errors.Is(err, lock.ErrUnreachable):
		h.Held = true
		h.Reason = err.Error() + "; file: " + h.Reason
	case err != nil:
		h.Held = true
		h.Reason = "etcd unreachable (" + err.Error() + "); file: " + h.Reason
	case st.Held && !l.heldHere():
		h.Held = true
		h.PID = st.PID
		h.Reason = st.Reason + "; file: " + h.Reason
	}
	return h, nil
}

func (l *Lock) heldHere() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.session != nil
}

// Describe is the etcd holder (wherever it runs), its lease's time left,
// and the local file.
func (l *Lock) Describe(ctx context.Context) (dream.LockHolder, error) {
	fh, err := l.file.Inspect()
	if err != nil {
		return dream.LockHolder{}, err
	}
	ctx, cancel := l.op(ctx)
	defer cancel()
	st, err := l.describeEtcd(ctx)
	st.File = &fh
	if err != nil {
		st.Held, st.Unreachable = true, true
		st.Reason = err.Error()
		if !errors.Is(err, lock.ErrUnreachable) {
			st.Reason = "etcd unreachable: " + st.Reason
		}
	}
	return st, nil
}

// describeEtcd reads the oldest lock key (the holder) and its lease.
func (l *Lock) describeEtcd(ctx context.Context) (dream.LockHolder, error) {
	st := dream.LockHolder{Backend: "etcd", Where: l.Path()}
	if err := l.reachable(ctx); err != nil {
		return st, err
	}
	resp, err := l.client.Get(ctx, l.lockPrefix()+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		l.failed()
		return st, err
	}
	if len(resp.Kvs) == 0 {
		st.Reason = "free (etcd " + l.cfg.Prefix + ")"
		return st, nil
	}
	kv := resp.Kvs[0]
	st.Held = true
	h, perr := parseHolder(kv.Value)
	st.Host, st.PID, st.TaskID = h.Host, h.PID, h.TaskID
	if !h.AcquiredAt.IsZero() {
		t := h.AcquiredAt
		st.Since = &t
	}
	left := ""
	if kv.Lease != 0 {
		if ttl, err := l.client.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil && ttl.TTL >= 0 {
			d := time.Duration(ttl.TTL) * time.Second
			st.LeaseRemaining = &d
			left = fmt.Sprintf(", lease %s left of %ds", d, ttl.GrantedTTL)
		}
	}
	switch {
	case perr != nil:
		st.Reason = fmt.Sprintf("held by an unknown holder (key %s)%s", kv.Key, left)
	case h.Host == "":
		st.Reason = "held by a holder still announcing itself" + left
	default:
		task := ""
		if h.TaskID != "" {
			task = " task " + h.TaskID
		}
		st.Reason = fmt.Sprintf("held by %s pid %d%s%s", h.Host, h.PID, task, left)
	}
	return st, nil
}

// Close releases a lock still held (as a failure) and the connection.
func (l *Lock) Close() error {
	var err error
	if l.heldHere() {
		err = l.Rollback(time.Time{})
	}
	l.cancel()
	return errors.Join(err, l.client.Close())
}

// ProbeTimeout bounds the first request to an etcd this process has not
// heard from yet, or that failed to answer: on a machine cut off from etcd,
// `dream status` must answer in a second or two with what is known
// locally, not after a request timeout for each question it asks.
const ProbeTimeout = 1500 * time.Millisecond

// recheckAfter is how long requests that only look or try (the holder, the
// last consolidation, an acquisition) fail at once after etcd did not
// answer a probe, before it is probed again.
const recheckAfter = 5 * time.Second

// reach is what this process knows of etcd's reachability.
type reach struct {
	mu     sync.Mutex
	up     bool      // answered since the last failure
	downAt time.Time // when a probe last went unanswered
	err    error     // that probe's error
}

// reachable probes etcd with one short request unless it answered since
// the last failure; a probe unanswered within ProbeTimeout is
// lock.ErrUnreachable, remembered for recheckAfter.
func (l *Lock) reachable(ctx context.Context) error {
	r := &l.reach
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.up {
		return nil
	}
	if !r.downAt.IsZero() && time.Since(r.downAt) < recheckAfter {
		return r.err
	}
	ctx, cancel := context.WithTimeout(ctx, min(ProbeTimeout, l.cfg.OpTimeout))
	defer cancel()
	if _, err := l.client.Get(ctx, l.lastKey(), clientv3.WithCountOnly()); err != nil {
		r.downAt = time.Now()
		r.err = fmt.Errorf("etcd at %s: %w (no answer within %s: %v)", strings.Join(l.cfg.Endpoints, ","), lock.ErrUnreachable, min(ProbeTimeout, l.cfg.OpTimeout), err)
		return r.err
	}
	r.up = true
	return nil
}

// failed notes that a request went unanswered: the next one probes first.
func (l *Lock) failed() {
	l.reach.mu.Lock()
	l.reach.up = false
	l.reach.mu.Unlock()
}

var _ dream.Lock = (*Lock)(nil)
