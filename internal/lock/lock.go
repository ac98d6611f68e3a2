// Package lock implements MEMORY_DIR/.consolidate-lock, the one file that
// Claude Code, codebot and dream use to keep two consolidations of the same
// memory directory from overlapping.
//
// The file carries three meanings at once, exactly as those agents use it:
// its mtime is the time of the last consolidation (the time gate stats it);
// its body is the decimal PID of the process consolidating right now (empty
// when idle); and a holder is live only while that PID is alive and the mtime
// is under an hour old, so a crashed holder or a reused PID never blocks
// consolidation for long.
//
// The agents acquire by writing their PID and re-reading it. Two reclaimers
// can both read back their own PID when their writes and reads interleave,
// so among dream processes that window is closed by an exclusive flock on a
// side "guard" file in dream's state directory, held from TryAcquire until
// Complete or Rollback and released by the kernel if the process dies. The
// PID body is still written and honoured, so the other agents see dream and
// dream sees them. The guard file also records the mtime the lock had before
// acquisition, because a dream killed with SIGKILL leaves its own fresh mtime
// behind: the next acquirer returns the recorded prior instead, and a crash
// never closes the time gate for a day.
//
// A symlinked lock file is never written or read through: it is reported as
// reclaimable and replaced by a regular file on acquisition.
package lock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// FileName is the lock file's name inside the memory directory.
const FileName = ".consolidate-lock"

// StaleAfter is how old a lock mtime may be before its holder is presumed
// gone (its PID possibly reused) and the lock may be reclaimed.
const StaleAfter = time.Hour

// FutureSkew is how far in the future a lock mtime may be before it is
// treated as clock skew rather than a fresh acquisition.
const FutureSkew = time.Minute

// MaxPID is the largest PID accepted in a lock body: Linux's pid_max ceiling
// (2^22). Anything larger is garbage, not a process.
const MaxPID = 1 << 22

// maxBody is how many bytes of the lock body are ever read: a PID is at most
// a few digits, and a huge file must not be slurped into memory.
const maxBody = 64

// ErrHeld is returned, wrapped with the holder, when another live holder has
// the lock.
var ErrHeld = errors.New("consolidation lock is held")

// ErrNotHeld is returned by Complete and Rollback on a Lock that does not
// hold the lock.
var ErrNotHeld = errors.New("consolidation lock is not held by this process")

// ErrLost is returned by Complete and Rollback when, while this Lock held
// the guard, another agent (which knows nothing of the guard) reclaimed the
// lock file, typically because the dream ran longer than StaleAfter. The
// lock file is then left to its new holder.
var ErrLost = errors.New("consolidation lock was taken over by another holder")

// Lock is one memory directory's consolidation lock as seen by this process.
// It is safe for concurrent use; at most one TryAcquire wins per Lock.
type Lock struct {
	path      string
	guardPath string
	pid       int
	now       func() time.Time
	alive     func(pid int) bool

	mu    sync.Mutex
	guard *os.File // non-nil while this Lock holds the lock
}

// New returns the lock of memoryDir. guardPath is the side file whose flock
// excludes other dream processes; it must live outside the memory directory
// (in dream's state dir), be unique per memory directory, and never be
// deleted while dream may run.
func New(memoryDir, guardPath string) *Lock {
	return &Lock{
		path:      filepath.Join(memoryDir, FileName),
		guardPath: guardPath,
		pid:       os.Getpid(),
		now:       time.Now,
		alive:     processAlive,
	}
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// LastConsolidatedAt is the lock file's mtime: the time of the last
// consolidation. It is zero, with a nil error, when there is no lock file.
// It costs one lstat and nothing else, so the time gate can afford it.
func (l *Lock) LastConsolidatedAt() (time.Time, error) {
	fi, err := os.Lstat(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading last consolidation time: %w", err)
	}
	return fi.ModTime(), nil
}

// Held reports whether this Lock currently holds the lock.
func (l *Lock) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.guard != nil
}

// TryAcquire takes the lock if no other live holder has it. It returns the
// mtime the lock had before (zero when there was no lock file), which the
// caller passes to Rollback on failure. When the previous holder was a dream
// process that died without releasing, prior is the mtime recorded before
// that dream began, not the mtime the dead process wrote.
//
// errors.Is(err, ErrHeld) when another live holder has the lock.
func (l *Lock) TryAcquire() (prior time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.guard != nil {
		return time.Time{}, fmt.Errorf("%w: already held by this process (pid %d)", ErrHeld, l.pid)
	}
	if l.guardPath == "" {
		return time.Time{}, errors.New("acquiring consolidation lock: no guard file path")
	}
	g, err := openGuard(l.guardPath)
	if err != nil {
		return time.Time{}, err
	}
	got, err := tryFlock(g)
	if err != nil {
		g.Close()
		return time.Time{}, fmt.Errorf("locking guard %s: %w", l.guardPath, err)
	}
	if !got {
		rec, _ := readRecord(g)
		g.Close()
		if rec.PID == 0 { // the holder is between flock and record
			st, _ := readState(l.path)
			rec.PID, _ = parsePID(st.body)
		}
		return time.Time{}, fmt.Errorf("%w by a dream process (pid %d)", ErrHeld, rec.PID)
	}
	keep := false
	defer func() {
		if !keep {
			unlockFlock(g)
			g.Close()
		}
	}()

	st, err := readState(l.path)
	if err != nil {
		return time.Time{}, err
	}
	rec, hasRec := readRecord(g)
	now := l.now()
	// Holding the flock proves no other Lock in this process holds the lock,
	// so a body naming our own PID was left by an earlier process that had
	// it (PIDs repeat, e.g. across container restarts): not a live holder.
	alive := l.alive
	if guardSupported {
		alive = func(pid int) bool { return pid != l.pid && l.alive(pid) }
	}
	h := classify(st, now, alive, false)

	// A record naming the PID still in the lock body means a dream acquired
	// and never released; since we now hold its flock, it is dead (or
	// abandoned its Lock). Where flock is unavailable, only a dead PID proves it.
	deadDream := hasRec && rec.PID > 0 && h.PID == rec.PID &&
		(guardSupported || !l.alive(rec.PID))
	switch {
	case deadDream:
		prior = time.Time{}
		if rec.Prior != nil {
			prior = *rec.Prior
		}
	case h.Live:
		return time.Time{}, fmt.Errorf("%w: %s", ErrHeld, h.Reason)
	case st.exists:
		prior = st.mtime
	}

	if err := writeRecord(g, record{PID: l.pid, Prior: timePtr(prior), AcquiredAt: now}); err != nil {
		return time.Time{}, err
	}
	if err := writeLockFile(l.path, []byte(strconv.Itoa(l.pid)), time.Time{}); err != nil {
		// The lock file is unchanged, so the old record (if any) would be
		// more truthful than ours; ours names a PID not in the body and is inert.
		clearRecord(g)
		return time.Time{}, fmt.Errorf("acquiring consolidation lock: %w", err)
	}
	// Re-read as the other agents do: one of them may have written its PID
	// between our classification and our write.
	after, err := readState(l.path)
	if err != nil {
		clearRecord(g)
		return time.Time{}, err
	}
	if pid, ok := parsePID(after.body); !ok || pid != l.pid {
		clearRecord(g)
		return time.Time{}, fmt.Errorf("%w: lost the race to %s", ErrHeld, describeBody(after))
	}
	keep = true
	l.guard = g
	return prior, nil
}

// Complete ends a successful consolidation: the body is emptied and the
// mtime becomes now, the new last consolidation time. The guard is released.
func (l *Lock) Complete() error {
	return l.release(func() error {
		return writeLockFile(l.path, nil, time.Time{})
	})
}

// Rollback ends a failed or killed consolidation: the body is emptied and
// the mtime rewound to prior so the time gate reopens, or the file is removed
// when prior is zero (there had never been a consolidation). The guard is
// released.
func (l *Lock) Rollback(prior time.Time) error {
	return l.release(func() error {
		if prior.IsZero() {
			if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", l.path, err)
			}
			return nil
		}
		return writeLockFile(l.path, nil, prior)
	})
}

// release runs settle on the lock file if the body is still ours, then
// clears the guard record and drops the flock. The record is cleared only
// once the lock file is settled, so a failure here leaves the next acquirer
// the same recovery path as a crash.
func (l *Lock) release(settle func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.guard
	if g == nil {
		return ErrNotHeld
	}
	l.guard = nil
	defer func() {
		unlockFlock(g)
		g.Close()
	}()
	st, err := readState(l.path)
	if err != nil {
		return err
	}
	if pid, ok := parsePID(st.body); !ok || pid != l.pid {
		clearRecord(g)
		return fmt.Errorf("%w (%s)", ErrLost, describeBody(st))
	}
	if err := settle(); err != nil {
		return fmt.Errorf("releasing consolidation lock: %w", err)
	}
	clearRecord(g)
	return nil
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
