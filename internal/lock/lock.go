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
// so among dream processes that window is closed by an exclusive flock on
// the lock file itself, held from TryAcquire until Complete or Rollback and
// released by the kernel if the process dies. Because the flock lives on the
// file in the memory directory, it excludes every dream process that can
// open that directory, whatever its state directory, user or container. To
// keep the flock meaningful the file is written in place (never replaced by
// a rename), and after taking the flock the acquirer checks that the path
// still names the inode it locked: a holder that removed the file on
// Rollback cannot leave a waiter holding a flock on a deleted inode.
//
// The PID body is still written and honoured, so the other agents see dream
// and dream sees them. A record in dream's state directory (the "guard"
// file) keeps the mtime the lock had before acquisition, because a dream
// killed with SIGKILL leaves its own fresh mtime behind: the next acquirer
// sharing that state directory returns the recorded prior instead, and a
// crash never closes the time gate for a day. The same record rides on the
// lock file's inode as a user extended attribute where the file system has
// them (Linux), so that a dream process with another state dir recovers it
// too, and sees a running dream as one.
//
// While a dream holds the lock, another agent that knows nothing of the
// flock may still reclaim the file (it follows the seeds' protocol, or runs
// in a PID namespace where our PID looks dead). Verify detects that: the
// body must still be our PID, on the inode we locked, with the mtime we
// gave it. A holder that lost the lock never writes the file again.
//
// A symlinked lock file is never written or read through: it is reported as
// reclaimable and replaced by a regular file on acquisition. Any other kind
// of non-regular file (a directory, a FIFO, a device) and a file that cannot
// be read fail closed: the lock is not taken.
package lock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/dreamkit/dream/internal/proc"
)

// FileName is the lock file's name inside the memory directory.
const FileName = ".consolidate-lock"

// StaleAfter is how old a lock mtime may be before its holder is presumed
// gone (its PID possibly reused) and the lock may be reclaimed.
const StaleAfter = time.Hour

// FutureSkew is how far in the future a lock mtime may be before it is
// treated as clock skew rather than a fresh acquisition.
const FutureSkew = time.Minute

// MaxPID is the largest PID accepted in a lock body (proc.MaxPID): anything
// larger is garbage, not a process.
const MaxPID = proc.MaxPID

// maxBody is how many bytes of the lock body are ever read: a PID is at most
// a few digits, and a huge file must not be slurped into memory.
const maxBody = 64

// ErrHeld is returned, wrapped with the holder, when another live holder has
// the lock.
var ErrHeld = errors.New("consolidation lock is held")

// ErrNotHeld is returned by Complete, Rollback and Verify on a Lock that does
// not hold the lock.
var ErrNotHeld = errors.New("consolidation lock is not held by this process")

// ErrUnreachable marks a backend whose server did not answer (etcd down,
// or this machine cut off from it): nothing is known of the holder or of
// the last consolidation beyond this machine's file.
var ErrUnreachable = errors.New("unreachable")

// ErrFenced is returned by a backend's Fence when the lock was lost between
// the acquisition and the landing of the dream's changes: the dream must
// roll back.
var ErrFenced = errors.New("consolidation lock lost before the commit (fenced): nothing landed")

// ErrLost is matched (errors.Is) by a *LostError: while this Lock held the
// flock, another agent (which knows nothing of it) reclaimed the lock file,
// typically because the dream ran longer than StaleAfter. The lock file is
// then left to its new holder.
var ErrLost = errors.New("consolidation lock was taken over by another holder")

// LostError says who took the lock over. Callers decide on it with
// errors.Is(err, ErrLost) or errors.As for the PID.
type LostError struct {
	// PID is the new holder named in the body; 0 when the body names no
	// process (emptied, removed, replaced, garbage).
	PID int
	// Detail says what was found instead of our PID, e.g. "lock file removed".
	Detail string
}

func (e *LostError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("lock taken over by PID %d", e.PID)
	}
	return "lock taken over: " + e.Detail
}

// Is makes errors.Is(err, ErrLost) true.
func (e *LostError) Is(target error) bool { return target == ErrLost }

// Lock is one memory directory's consolidation lock as seen by this process.
// It is safe for concurrent use; at most one TryAcquire wins per Lock.
type Lock struct {
	path      string
	guardPath string
	pid       int
	now       func() time.Time
	alive     func(pid int) bool

	mu sync.Mutex
	h  *hold // non-nil while this Lock holds the lock
}

// hold is what a Lock keeps open while it holds the lock.
type hold struct {
	// file is the lock file, flocked.
	file *os.File
	// guard is the record file in the state dir; it carries the flock only
	// where the memory dir's file system cannot flock (see flockFallback).
	guard *os.File
	// written is the lock file as our PID write left it: Verify compares
	// the inode and mtime against it.
	written os.FileInfo
}

// New returns the lock of memoryDir. guardPath is the side file in dream's
// state dir that records the mtime before each acquisition; it must live
// outside the memory directory, be unique per memory directory, and never
// be deleted while dream may run. Exclusion does not depend on it: dream
// processes with different state dirs still exclude each other through the
// flock on the lock file itself.
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
	return l.h != nil
}

// TryAcquire takes the lock if no other live holder has it. It returns the
// mtime the lock had before (zero when there was no lock file), which the
// caller passes to Rollback on failure. When the previous holder was a dream
// process that died without releasing, prior is the mtime recorded before
// that dream began, not the mtime the dead process wrote.
//
// errors.Is(err, ErrHeld) when another live holder has the lock. Any other
// error (the path is a directory or a FIFO, the file cannot be read or
// written) means the lock was not taken and nothing was changed.
func (l *Lock) TryAcquire() (prior time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		return time.Time{}, fmt.Errorf("%w: already held by this process (pid %d)", ErrHeld, l.pid)
	}
	if l.guardPath == "" {
		return time.Time{}, errors.New("acquiring consolidation lock: no guard file path")
	}
	g, err := openGuard(l.guardPath)
	if err != nil {
		return time.Time{}, err
	}
	f, created, err := l.openFlocked(g)
	if err != nil {
		g.Close()
		return time.Time{}, err
	}
	keep := false
	var restore func()
	defer func() {
		if !keep {
			abandon(f, g, restore)
		}
	}()

	st, err := readOpen(f)
	if err != nil {
		if created {
			restore = func() { removeIfSame(l.path, f) }
		}
		return time.Time{}, err
	}
	if created && st.size == 0 {
		// We made the file a moment ago: there was no lock file.
		st = fileState{info: st.info}
		restore = func() { removeIfSame(l.path, f) }
	}
	now := l.now()
	if prior, err = l.priorOf(g, st, now); err != nil {
		return time.Time{}, err
	}

	mine := record{PID: l.pid, Prior: timePtr(prior), AcquiredAt: now}
	if err := writeRecord(g, mine); err != nil {
		return time.Time{}, err
	}
	writeHolderAttr(f, mine) // fsynced with the body below
	if !created || st.exists {
		// Put back what we found if we fail after writing our PID, so a
		// failed acquisition changes nothing (and never leaves our live
		// PID behind to block others for an hour).
		orig := st
		restore = func() { restoreFile(f, orig) }
	}
	if err := writeBody(f, []byte(strconv.Itoa(l.pid))); err != nil {
		clearRecord(g)
		return time.Time{}, fmt.Errorf("acquiring consolidation lock: %w", err)
	}
	// Re-read as the other agents do: one of them may have written its PID
	// between our classification and our write.
	after, err := readOpen(f)
	if err != nil {
		clearRecord(g)
		return time.Time{}, err
	}
	if pid, ok := parsePID(after.body); !ok || pid != l.pid {
		clearRecord(g)
		restore = nil // their body, not ours: leave it
		return time.Time{}, fmt.Errorf("%w: lost the race to %s", ErrHeld, describeBody(after))
	}
	keep = true
	l.h = &hold{file: f, guard: g, written: after.info}
	return prior, nil
}

// abandon ends an acquisition that failed: restore, when set, puts back
// what TryAcquire found, then both flocks are let go and both files closed.
func abandon(f, g *os.File, restore func()) {
	if restore != nil {
		restore()
	}
	unlockFlock(f)
	unlockFlock(g)
	f.Close()
	g.Close()
}

// priorOf judges the lock TryAcquire found (st, with the record in guard
// g) at now: ErrHeld when a live holder has it, else the mtime a failed
// dream must roll it back to. A dream that died holding it left its own
// prior in the record, and that one is kept.
func (l *Lock) priorOf(g *os.File, st fileState, now time.Time) (time.Time, error) {
	rec, hasRec := readRecord(g)
	if pid, _ := parsePID(st.body); st.hasHolder && st.holder.PID == pid && (!hasRec || rec.PID != pid) {
		// A dream from another state dir left this inode: its record
		// travels with the file.
		rec, hasRec = st.holder, true
	}
	// Holding the flock proves no other Lock in this process holds the lock,
	// so a body naming our own PID was left by an earlier process that had
	// it (PIDs repeat, e.g. across container restarts): not a live holder.
	alive := l.alive
	if guardSupported {
		alive = func(pid int) bool { return pid != l.pid && l.alive(pid) }
	}
	h := classify(st, now, alive, false)

	// A record naming the PID still in the lock body means a dream acquired
	// and never released; since we now hold the flock, it is dead (or
	// abandoned its Lock). Where flock is unavailable, only a dead PID proves it.
	deadDream := hasRec && rec.PID > 0 && h.PID == rec.PID &&
		(guardSupported || !l.alive(rec.PID))
	switch {
	case deadDream:
		if rec.Prior != nil {
			return *rec.Prior, nil
		}
		return time.Time{}, nil
	case h.Live:
		return time.Time{}, fmt.Errorf("%w: %s", ErrHeld, h.Reason)
	case st.exists:
		return st.mtime, nil
	}
	return time.Time{}, nil
}

// maxOpenAttempts bounds how often TryAcquire reopens a lock file that was
// removed or replaced between its open and its flock.
const maxOpenAttempts = 16

// openFlocked opens the lock file (creating it if missing: created says so)
// and takes its flock, making sure the flocked inode is the one at the path.
// A flock held by another process is ErrHeld, naming the PID in the body.
func (l *Lock) openFlocked(g *os.File) (f *os.File, created bool, err error) {
	for range maxOpenAttempts {
		f, created, err = openLockFile(l.path)
		if errors.Is(err, fs.ErrPermission) {
			// Another user's lock file (or an unreadable one): never
			// taken, but a dream holding it is still "held", not a failure.
			if held := heldByDream(l.path); held != nil {
				return nil, false, held
			}
			return nil, false, fmt.Errorf("%w (dream must read and write it; to share a memory dir between users, make the file group-writable)", err)
		}
		if err != nil {
			return nil, false, err
		}
		got, err := tryFlock(f)
		if err != nil && flockFallback(err) {
			// The memory dir's file system cannot flock (some FUSE
			// mounts): exclusion falls back to the state-dir guard.
			got, err = tryFlock(g)
		}
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("locking %s: %w", l.path, err)
		}
		if !got {
			st, _ := readOpen(f)
			f.Close()
			pid, _ := parsePID(st.body)
			if pid == 0 {
				if rec, ok := readRecord(g); ok {
					pid = rec.PID
				}
			}
			return nil, false, fmt.Errorf("%w by a dream process (pid %d)", ErrHeld, pid)
		}
		if sameFile(f, l.path) {
			return f, created, nil
		}
		// The holder we waited on removed or replaced the file: our flock
		// is on an inode nobody else will look at.
		unlockFlock(f)
		unlockFlock(g)
		f.Close()
	}
	return nil, false, fmt.Errorf("acquiring consolidation lock: %s keeps being replaced", l.path)
}

// heldByDream reports, as an ErrHeld error, a dream that holds the flock of
// a lock file this process may read but not write; nil otherwise.
func heldByDream(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|readFlags, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	got, err := tryFlock(f)
	if err != nil {
		return nil
	}
	if got {
		unlockFlock(f)
		return nil
	}
	st, _ := readOpen(f)
	pid, _ := parsePID(st.body)
	return fmt.Errorf("%w by a dream process (pid %d)", ErrHeld, pid)
}

// Verify reports whether this Lock still holds the lock as every other agent
// sees it: the file at the path is the inode we locked, its body is our PID
// and its mtime is the one our acquisition gave it. Otherwise it returns a
// *LostError (errors.Is ErrLost) naming the new holder. A dream calls it at
// each stage boundary and just before it commits, so that it never lands
// changes after another agent took the memory dir over. It is cheap: one
// open, one fstat and one small read.
func (l *Lock) Verify() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil {
		return ErrNotHeld
	}
	return l.verifyLocked()
}

func (l *Lock) verifyLocked() error {
	st, err := readState(l.path)
	if err != nil {
		return &LostError{Detail: err.Error()}
	}
	pid, ok := parsePID(st.body)
	switch {
	case !st.exists || st.symlink || st.tooBig || !ok:
		return &LostError{Detail: describeBody(st)}
	case pid != l.pid:
		return &LostError{PID: pid, Detail: describeBody(st)}
	case !os.SameFile(st.info, l.h.written):
		return &LostError{Detail: "lock file replaced by another file"}
	case !st.mtime.Equal(l.h.written.ModTime()):
		return &LostError{Detail: fmt.Sprintf("lock file rewritten at %s", st.mtime.Format(time.RFC3339Nano))}
	}
	return nil
}

// Complete ends a successful consolidation: the body is emptied and the
// mtime becomes now, the new last consolidation time. The flock is released.
func (l *Lock) Complete() error {
	return l.release(func(f *os.File) error {
		if err := f.Truncate(0); err != nil {
			return err
		}
		clearHolderAttr(f)
		return setFileTimes(f, l.path, time.Now())
	})
}

// Rollback ends a failed or killed consolidation: the body is emptied and
// the mtime rewound to prior so the time gate reopens, or the file is removed
// when prior is zero (there had never been a consolidation). The flock is
// released.
func (l *Lock) Rollback(prior time.Time) error {
	return l.release(func(f *os.File) error {
		if prior.IsZero() {
			if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", l.path, err)
			}
			return nil
		}
		if err := f.Truncate(0); err != nil {
			return err
		}
		clearHolderAttr(f)
		return setFileTimes(f, l.path, prior)
	})
}

// release runs settle on the lock file if it is still ours (Verify), then
// clears the guard record and drops the flock. A lock that was taken over
// is left exactly as its new holder wrote it. The record is cleared only
// once the lock file is settled, so a failure here leaves the next acquirer
// the same recovery path as a crash.
func (l *Lock) release(settle func(f *os.File) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.h
	if h == nil {
		return ErrNotHeld
	}
	defer func() {
		l.h = nil
		unlockFlock(h.file)
		unlockFlock(h.guard)
		h.file.Close()
		h.guard.Close()
	}()
	if err := l.verifyLocked(); err != nil {
		clearRecord(h.guard)
		return err
	}
	if err := settle(h.file); err != nil {
		return fmt.Errorf("releasing consolidation lock: %w", err)
	}
	clearRecord(h.guard)
	return nil
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
