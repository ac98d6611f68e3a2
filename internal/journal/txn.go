package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Txn is one dream's transaction over a memory dir.
type Txn struct {
	memDir string // absolute memory dir
	txnDir string // <stateDir>/journal/<memkey>/<id>
	rec    record
	closed bool
	// frozen: staging is settled (Freeze), so cached, once computed,
	// holds its changes.
	frozen bool
	cached *[]recChange
	// hashedAt is each staged file's stat when the last scan hashed it:
	// the commit installs a file only while it is still that version.
	hashedAt map[string]fingerprint
}

// journalRoot is where the transactions of one memory dir live.
func journalRoot(stateDir, memoryDir string) (string, string, error) {
	if stateDir == "" {
		return "", "", errors.New("state dir is empty")
	}
	mem, err := absDir(memoryDir)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(stateDir, "journal", keyOf(mem)), mem, nil
}

// Options tune Begin.
type Options struct {
	// LinkUnchanged stages each file as a hard link to the original instead
	// of a copy: a view in which only what the runner writes is
	// materialised, and reads are served by the originals; the commit then
	// links each changed staged file into place rather than copying it. It
	// is only safe for a runner that never writes a staged file in place —
	// every write a new file renamed over the old one, as dream's sandbox
	// and offline engine do — since an in-place write would go through the
	// link into the memory itself.
	LinkUnchanged bool
}

// Begin starts a transaction: it copies the memory dir into a fresh staging
// dir and records a fingerprint of every original file, so Commit can tell
// whether anyone edited memory meanwhile.
func Begin(stateDir, memoryDir, id string) (*Txn, error) {
	return BeginWith(stateDir, memoryDir, id, Options{})
}

// BeginWith is Begin with options.
func BeginWith(stateDir, memoryDir, id string, o Options) (*Txn, error) {
	if err := validID(id); err != nil {
		return nil, fmt.Errorf("journal: begin: %w", err)
	}
	root, mem, err := journalRoot(stateDir, memoryDir)
	if err != nil {
		return nil, fmt.Errorf("journal: begin: %w", err)
	}
	if info, err := os.Stat(mem); err != nil {
		return nil, fmt.Errorf("journal: begin: memory dir: %w", err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("journal: begin: memory dir %s is not a directory", mem)
	}
	t := &Txn{memDir: mem, txnDir: filepath.Join(root, id)}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("journal: begin %s: %w", id, err)
	}
	if err := os.Mkdir(t.txnDir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("journal: begin %s: a transaction with this id already exists", id)
		}
		return nil, fmt.Errorf("journal: begin %s: %w", id, err)
	}
	t.rec = record{ID: id, MemoryDir: mem, PID: os.Getpid(), State: StateStaging, CreatedAt: time.Now().UTC()}
	// The record exists before any copy, so a crash mid-copy is seen as an
	// unfinished staging and discarded.
	if err := writeRecord(t.txnDir, t.rec); err != nil {
		os.RemoveAll(t.txnDir)
		return nil, fmt.Errorf("journal: begin: %w", err)
	}
	if err := os.Mkdir(t.Dir(), 0o700); err != nil {
		os.RemoveAll(t.txnDir)
		return nil, fmt.Errorf("journal: begin %s: %w", id, err)
	}
	base, staged, err := stageTree(mem, t.Dir(), o.LinkUnchanged)
	if err != nil {
		os.RemoveAll(t.txnDir)
		return nil, fmt.Errorf("journal: begin %s: %w", id, err)
	}
	t.rec.Base, t.rec.Staged, t.rec.Linked = base, staged, o.LinkUnchanged
	if err := writeRecord(t.txnDir, t.rec); err != nil {
		os.RemoveAll(t.txnDir)
		return nil, fmt.Errorf("journal: begin: %w", err)
	}
	crashPoint("begin:done")
	return t, nil
}

// ID returns the transaction id.
func (t *Txn) ID() string { return t.rec.ID }

// Dir returns the staging dir the agent reads and writes instead of the
// memory dir.
func (t *Txn) Dir() string { return filepath.Join(t.txnDir, "stage") }

// MemoryDir returns the absolute memory dir the transaction commits to.
func (t *Txn) MemoryDir() string { return t.memDir }

// Info describes the transaction.
func (t *Txn) Info() Info {
	return Info{ID: t.rec.ID, State: t.rec.State, PID: t.rec.PID, CreatedAt: t.rec.CreatedAt}
}

// Discard drops the staging copy and the record; the memory dir is
// untouched. Discarding twice is not an error.
func (t *Txn) Discard() error {
	if t.rec.State == StateCommitting && !t.closed {
		return fmt.Errorf("journal: discard %s: the commit is under way; Recover will finish it", t.rec.ID)
	}
	if err := os.RemoveAll(t.txnDir); err != nil {
		return fmt.Errorf("journal: discard %s: %w", t.rec.ID, err)
	}
	t.closed = true
	return nil
}

// Park keeps the staging copy for review after this process exits: the
// user can later Load it and Commit or Discard it.
func (t *Txn) Park() error { return t.ParkFor("") }

// ParkFor is Park recording why the transaction waits (ParkReason).
func (t *Txn) ParkFor(reason string) error {
	if t.closed {
		return fmt.Errorf("journal: park %s: %w", t.rec.ID, ErrClosed)
	}
	rec := t.rec
	rec.State = StateParked
	rec.ParkReason = reason
	if err := writeRecord(t.txnDir, rec); err != nil {
		return fmt.Errorf("journal: park: %w", err)
	}
	t.rec = rec
	return nil
}

// ParkReason is why a parked transaction waits for review, as given to
// ParkFor; "" for one parked without a reason.
func (t *Txn) ParkReason() string { return t.rec.ParkReason }

// SetUnits gives the transaction its account of what it changes (see
// record.Units), kept when it is parked.
func (t *Txn) SetUnits(units []json.RawMessage) { t.rec.Units = units }

// Units is the account SetUnits gave, or CommitOptions.ReviewUnits for
// the review a commit parked.
func (t *Txn) Units() []json.RawMessage { return t.rec.Units }

// Load reopens a parked transaction by id or unique id prefix.
func Load(stateDir, memoryDir, id string) (*Txn, error) {
	root, mem, err := journalRoot(stateDir, memoryDir)
	if err != nil {
		return nil, fmt.Errorf("journal: load: %w", err)
	}
	infos, err := list(root)
	if err != nil {
		return nil, fmt.Errorf("journal: load: %w", err)
	}
	var match []txnEntry
	for _, e := range infos {
		if e.name == id {
			match = []txnEntry{e}
			break
		}
		if id != "" && strings.HasPrefix(e.name, id) {
			match = append(match, e)
		}
	}
	switch {
	case len(match) == 0:
		return nil, fmt.Errorf("journal: load %q: %w", id, ErrNotFound)
	case len(match) > 1:
		names := make([]string, len(match))
		for i, m := range match {
			names[i] = m.name
		}
		return nil, fmt.Errorf("journal: load %q: ambiguous prefix matches %s", id, strings.Join(names, ", "))
	}
	e := match[0]
	if e.err != nil {
		return nil, fmt.Errorf("journal: load %s: %w", e.name, e.err)
	}
	if e.rec.State != StateParked {
		return nil, fmt.Errorf("journal: load %s: state is %s, only parked transactions can be reopened", e.name, e.rec.State)
	}
	return &Txn{memDir: mem, txnDir: filepath.Join(root, e.name), rec: e.rec}, nil
}

// ListParked lists the parked transactions of a memory dir, oldest first.
func ListParked(stateDir, memoryDir string) ([]Info, error) {
	root, _, err := journalRoot(stateDir, memoryDir)
	if err != nil {
		return nil, fmt.Errorf("journal: list: %w", err)
	}
	entries, err := list(root)
	if err != nil {
		return nil, fmt.Errorf("journal: list: %w", err)
	}
	var out []Info
	for _, e := range entries {
		if e.err == nil && e.rec.State == StateParked {
			out = append(out, Info{ID: e.rec.ID, State: e.rec.State, PID: e.rec.PID, CreatedAt: e.rec.CreatedAt})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// txnEntry is one transaction dir with its record or the reason it has
// none.
type txnEntry struct {
	name string
	rec  record
	err  error
}

// list reads every transaction dir under root, sorted by name.
func list(root string) ([]txnEntry, error) {
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []txnEntry
	for _, de := range des {
		// A dot name is never a transaction id (validID): an older
		// version's leftovers, not a dream to recover.
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		e := txnEntry{name: de.Name()}
		e.rec, e.err = readRecord(filepath.Join(root, de.Name()))
		if e.err == nil && e.rec.ID != de.Name() {
			e.err = fmt.Errorf("record names transaction %q", e.rec.ID)
		}
		out = append(out, e)
	}
	return out, nil
}
