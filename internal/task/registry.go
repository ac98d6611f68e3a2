package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// ErrNotFound is returned when no task matches an id or prefix.
var ErrNotFound = errors.New("no such task")

// ErrAmbiguous is returned when a prefix matches more than one task.
var ErrAmbiguous = errors.New("ambiguous task id")

// ErrFinished is returned by Kill for a task that already ended, and by
// Handle.Update after Finish.
var ErrFinished = errors.New("task already finished")

const (
	entryExt  = ".json"
	markerExt = ".kill"
	// maxEntrySize bounds what is read of an entry file; an entry is a few KB.
	maxEntrySize = 1 << 20
)

// Registry is the task directory of one state dir. It holds no cache: every
// call reads the directory, so several processes see each other.
type Registry struct {
	dir          string
	pid          int
	now          func() time.Time
	alive        func(pid int) bool
	pollInterval time.Duration
	// flushEvery is the most often a running dream's progress is written;
	// 0 writes every change at once.
	flushEvery time.Duration
}

// FlushInterval is how often, at most, a running dream's progress reaches
// its entry file.
const FlushInterval = 300 * time.Millisecond

// Open returns the registry under stateDir/tasks, creating the directory.
func Open(stateDir string) (*Registry, error) {
	if stateDir == "" {
		return nil, errors.New("opening task registry: empty state dir")
	}
	dir := filepath.Join(stateDir, "tasks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening task registry: %w", err)
	}
	return &Registry{
		dir:          dir,
		pid:          os.Getpid(),
		now:          time.Now,
		alive:        processAlive,
		pollInterval: 200 * time.Millisecond,
		flushEvery:   FlushInterval,
	}, nil
}

func (r *Registry) entryPath(id string) string  { return filepath.Join(r.dir, id+entryExt) }
func (r *Registry) markerPath(id string) string { return filepath.Join(r.dir, id+markerExt) }

// Start registers a new running dream and returns the Handle through which
// it reports progress. An empty ID gets NewID; PID defaults to this process;
// StartedAt defaults to now. Status, phase, end and error are always reset.
func (r *Registry) Start(e Entry) (*Handle, error) {
	e = e.clone()
	if e.PID == 0 {
		e.PID = r.pid
	}
	if e.StartedAt.IsZero() {
		e.StartedAt = r.now()
	}
	e.StartedAt = stamp(e.StartedAt)
	e.Status, e.Phase, e.EndedAt, e.Error = StatusRunning, PhaseStarting, nil, ""
	if len(e.FilesTouched) > 0 {
		e.Phase = PhaseUpdating
	}
	e.FilesTouchedTotal = max(e.FilesTouchedTotal, len(e.FilesTouched))
	if len(e.FilesTouched) > MaxFilesListed {
		e.FilesTouched = e.FilesTouched[:MaxFilesListed]
	}
	e.Turns = lastTurns(e.Turns)
	generated := e.ID == ""
	for attempt := 0; ; attempt++ {
		if generated {
			e.ID = NewID(e.StartedAt)
		}
		if err := validID(e.ID); err != nil {
			return nil, fmt.Errorf("starting task: %w", err)
		}
		err := r.create(e)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || !generated || attempt >= 8 {
			return nil, fmt.Errorf("starting task %s: %w", e.ID, err)
		}
	}
	// A marker left over from an earlier task of the same id must not kill this one.
	_ = os.Remove(r.markerPath(e.ID))
	return newHandle(r, e), nil
}

// create writes a new entry file, failing with os.ErrExist rather than
// replacing one: the content goes to a temp file that is hard-linked into
// place, which is atomic and refuses an existing name.
func (r *Registry) create(e Entry) error {
	b, err := encode(e)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(r.dir, fsutil.TempPrefix+"task-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, r.entryPath(e.ID)); err != nil {
		if errors.Is(err, os.ErrExist) {
			return err
		}
		// A file system without hard links: check, then rename.
		if _, serr := os.Lstat(r.entryPath(e.ID)); serr == nil {
			return os.ErrExist
		}
		return os.Rename(tmp, r.entryPath(e.ID))
	}
	return fsutil.SyncDir(r.dir)
}

// write replaces an entry file atomically.
func (r *Registry) write(e Entry) error {
	b, err := encode(e)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(r.entryPath(e.ID), b, 0o600, true); err != nil {
		return fmt.Errorf("writing task %s: %w", e.ID, err)
	}
	return nil
}

// writeFast replaces an entry file atomically but without fsync: for
// progress, which the next write supersedes. A reader sees the old entry or
// the new one, never a mix; after a power cut it may see an older one.
func (r *Registry) writeFast(e Entry) error {
	b, err := encode(e)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(r.entryPath(e.ID), b, 0o600, false); err != nil {
		return fmt.Errorf("writing task %s: %w", e.ID, err)
	}
	return nil
}

func encode(e Entry) ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding task %s: %w", e.ID, err)
	}
	return append(b, '\n'), nil
}

// read loads one entry file.
func (r *Registry) read(id string) (Entry, error) {
	f, err := os.Open(r.entryPath(id))
	if err != nil {
		return Entry{}, fmt.Errorf("reading task %s: %w", id, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEntrySize+1))
	if err != nil {
		return Entry{}, fmt.Errorf("reading task %s: %w", id, err)
	}
	e, err := decodeEntry(b)
	if err != nil {
		return Entry{}, fmt.Errorf("reading task %s: %w", id, err)
	}
	if e.ID != id {
		return Entry{}, fmt.Errorf("reading task %s: file holds id %q", id, e.ID)
	}
	return e, nil
}

// decodeEntry parses an entry file, rejecting what no Registry writes: an
// oversized file, an invalid id, or an unknown status.
func decodeEntry(b []byte) (Entry, error) {
	if len(b) > maxEntrySize {
		return Entry{}, errors.New("entry file too large")
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return Entry{}, fmt.Errorf("decoding entry: %w", err)
	}
	if err := validID(e.ID); err != nil {
		return Entry{}, err
	}
	if e.Status != StatusRunning && !e.Status.finished() {
		return Entry{}, fmt.Errorf("entry %s: unknown status %q", e.ID, e.Status)
	}
	return e, nil
}

// repair marks a running entry failed when its process is gone: nothing
// else will ever finish it. This process's own entries are left alone.
func (r *Registry) repair(e Entry) (Entry, error) {
	if e.Status != StatusRunning || e.PID == r.pid || r.alive(e.PID) {
		return e, nil
	}
	now := stamp(r.now())
	e.Status = StatusFailed
	e.Error = fmt.Sprintf("process %d died", e.PID)
	e.EndedAt = &now
	if err := r.write(e); err != nil {
		return e, err
	}
	_ = os.Remove(r.markerPath(e.ID))
	return e, nil
}

// ids lists the ids of all entry files.
func (r *Registry) ids() ([]string, error) {
	des, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	var ids []string
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, entryExt) || strings.HasPrefix(name, ".") {
			continue
		}
		ids = append(ids, strings.TrimSuffix(name, entryExt))
	}
	return ids, nil
}

// List returns every readable entry: running ones first, then finished ones,
// each newest first. Running entries whose process died are first rewritten
// as failed. Unreadable entry files are skipped, so one corrupt file cannot
// hide the others.
func (r *Registry) List() ([]Entry, error) {
	ids, err := r.ids()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		e, err := r.read(id)
		if err != nil {
			continue
		}
		if e, err = r.repair(e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ar, br := a.Status == StatusRunning, b.Status == StatusRunning; ar != br {
			return ar
		}
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.After(b.StartedAt)
		}
		return a.ID > b.ID
	})
	return out, nil
}

// Get returns the entry whose id is idOrPrefix or, failing that, the only
// one starting with it.
func (r *Registry) Get(idOrPrefix string) (Entry, error) {
	id, err := r.resolve(idOrPrefix)
	if err != nil {
		return Entry{}, err
	}
	e, err := r.read(id)
	if err != nil {
		return Entry{}, err
	}
	return r.repair(e)
}

func (r *Registry) resolve(idOrPrefix string) (string, error) {
	if idOrPrefix == "" {
		return "", fmt.Errorf("%w: empty id", ErrNotFound)
	}
	ids, err := r.ids()
	if err != nil {
		return "", err
	}
	var matches []string
	for _, id := range ids {
		if id == idOrPrefix {
			return id, nil
		}
		if strings.HasPrefix(id, idOrPrefix) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w: %q", ErrNotFound, idOrPrefix)
	case 1:
		return matches[0], nil
	}
	sort.Strings(matches)
	return "", fmt.Errorf("%w: %q matches %s", ErrAmbiguous, idOrPrefix, strings.Join(matches, ", "))
}

// Kill asks the process running a task to stop, by dropping a marker file
// its Handle polls for. A finished task is left unchanged and ErrFinished is
// returned with its entry.
func (r *Registry) Kill(idOrPrefix string) (Entry, error) {
	e, err := r.Get(idOrPrefix)
	if err != nil {
		return Entry{}, err
	}
	if e.Status != StatusRunning {
		return e, fmt.Errorf("killing task %s (%s): %w", e.ID, e.Status, ErrFinished)
	}
	f, err := os.OpenFile(r.markerPath(e.ID), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return e, fmt.Errorf("killing task %s: %w", e.ID, err)
	}
	if err := f.Close(); err != nil {
		return e, fmt.Errorf("killing task %s: %w", e.ID, err)
	}
	return e, nil
}

// KillWait is Kill followed by a wait of up to wait (0: none) for the
// dream to acknowledge: a killed dream rolls back, so the returned entry's
// status is killed once the memory is unchanged. A dream that has not
// acknowledged within wait is returned still running, with a nil error:
// the kill stays requested.
func (r *Registry) KillWait(ctx context.Context, idOrPrefix string, wait time.Duration) (Entry, error) {
	e, err := r.Kill(idOrPrefix)
	if err != nil {
		return e, err
	}
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return e, ctx.Err()
		case <-tick.C:
		}
		cur, err := r.Get(e.ID)
		if err != nil {
			return e, err
		}
		if e = cur; e.Status != StatusRunning {
			return e, nil
		}
	}
	return e, nil
}

// Prune deletes all but the newest keep finished entries. Running entries
// are never pruned.
func (r *Registry) Prune(keep int) error {
	if keep < 0 {
		return fmt.Errorf("pruning tasks: negative keep %d", keep)
	}
	all, err := r.List()
	if err != nil {
		return err
	}
	kept := 0
	for _, e := range all {
		if e.Status == StatusRunning {
			continue
		}
		if kept < keep {
			kept++
			continue
		}
		if err := os.Remove(r.entryPath(e.ID)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("pruning task %s: %w", e.ID, err)
		}
		_ = os.Remove(r.markerPath(e.ID))
	}
	return nil
}

// lastTurns keeps the newest MaxTurns summaries.
func lastTurns(t []string) []string {
	if len(t) > MaxTurns {
		t = append([]string{}, t[len(t)-MaxTurns:]...)
	}
	return t
}

// stamp drops the monotonic reading and the zone, so that a time reads back
// from JSON exactly as it was written.
func stamp(t time.Time) time.Time { return t.Round(0).UTC() }

// Lookup returns the entry of one task under stateDir, by id or unique
// prefix: for a caller that holds an id and no Registry.
func Lookup(stateDir, idOrPrefix string) (Entry, error) {
	r, err := Open(stateDir)
	if err != nil {
		return Entry{}, err
	}
	return r.Get(idOrPrefix)
}

// List lists the tasks under stateDir as Registry.List does: for a caller
// that holds a state dir and no Registry.
func List(stateDir string) ([]Entry, error) {
	r, err := Open(stateDir)
	if err != nil {
		return nil, err
	}
	return r.List()
}
