package lock

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// maxRecord bounds how much of the guard file is read; a record is ~150 bytes.
const maxRecord = 4096

// record is what the guard file holds while a dream holds the lock: who,
// since when, and the lock mtime before that dream began. It is emptied on
// Complete and Rollback, so a non-empty record found by the next flock holder
// means its writer died holding the lock.
type record struct {
	PID        int        `json:"pid"`
	Prior      *time.Time `json:"prior"` // null: there was no lock file
	AcquiredAt time.Time  `json:"acquired_at"`
}

// openGuard opens (creating if needed) the guard file, which holds the
// record (and, only where the memory dir cannot flock, the flock). Its
// directory is dream's private state, hence 0700/0600.
func openGuard(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating guard directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening guard file: %w", err)
	}
	return f, nil
}

// readRecord parses the guard's record; ok is false when it is empty or
// unreadable (a writer killed mid-write), which is treated as no record.
func readRecord(f *os.File) (record, bool) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxRecord))
	if err != nil || len(b) == 0 {
		return record{}, false
	}
	return parseRecord(b)
}

// parseRecord decodes a guard record, rejecting anything without a plausible PID.
func parseRecord(b []byte) (record, bool) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil || r.PID <= 0 || r.PID > MaxPID {
		return record{}, false
	}
	return r, true
}

// writeRecord replaces the guard's record and fsyncs it: it must be on disk
// before the lock body names us, or a crash could strand our fresh mtime.
func writeRecord(f *os.File, r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding guard record: %w", err)
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("writing guard record: %w", err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("writing guard record: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing guard record: %w", err)
	}
	return nil
}

// clearRecord empties the guard record. A failure is harmless: a stale
// record only matters while the lock body still names its PID.
func clearRecord(f *os.File) {
	_ = f.Truncate(0)
}

// readGuardRecord reads the record without opening for write or locking,
// for Inspect.
func readGuardRecord(path string) (record, bool) {
	f, err := os.Open(path)
	if err != nil {
		return record{}, false
	}
	defer f.Close()
	return readRecord(f)
}
