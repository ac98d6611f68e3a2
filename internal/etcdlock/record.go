package etcdlock

import (
	"encoding/json"
	"errors"
	"time"
)

// maxRecord bounds what is parsed from a key: a record is ~150 bytes, and a
// value written by something else must not be decoded at any size.
const maxRecord = 4096

// holderRecord is the value of the holder's lock key: who holds, since when,
// running which task. It lives as long as the holder's lease.
type holderRecord struct {
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	TaskID     string    `json:"task_id,omitempty"`
	AcquiredAt time.Time `json:"acquired_at"`
}

// lastRecord is the value of the last-consolidation key, written in the
// fenced transaction that precedes a dream's landing (pending) and made
// final by Complete. A pending record names the holder's lease and the
// value it replaced: if the holder dies between the fence and Complete
// (a crash mid-commit), its lease dies with it and every reader takes Prior,
// so the time gate is not moved by a dream that did not complete.
type lastRecord struct {
	At      time.Time `json:"at"`
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	TaskID  string    `json:"task_id,omitempty"`
	Pending bool      `json:"pending,omitempty"`
	Lease   int64     `json:"lease,omitempty"`
	// Prior is the last consolidation before the pending dream; zero is
	// "never".
	Prior time.Time `json:"prior,omitzero"`
}

var errRecord = errors.New("not a dream record")

// parseHolder decodes a lock key's value; an empty value is a holder that
// has not announced itself yet (between TryLock and the first Put).
func parseHolder(b []byte) (holderRecord, error) {
	var r holderRecord
	if len(b) == 0 {
		return r, nil
	}
	if len(b) > maxRecord {
		return r, errRecord
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return holderRecord{}, errRecord
	}
	if r.PID < 0 || len(r.Host) > 255 || len(r.TaskID) > 255 {
		return holderRecord{}, errRecord
	}
	return r, nil
}

// parseLast decodes the last-consolidation key. A value that is not a record
// with a time is an error: the caller treats it as "never consolidated"
// only after saying so.
func parseLast(b []byte) (lastRecord, error) {
	var r lastRecord
	if len(b) == 0 || len(b) > maxRecord {
		return r, errRecord
	}
	if err := json.Unmarshal(b, &r); err != nil || r.At.IsZero() {
		return lastRecord{}, errRecord
	}
	return r, nil
}
