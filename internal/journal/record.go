package journal

import (
	"encoding/json"
	"fmt"
	"github.com/dreamkit/dream/internal/fsutil"
	"os"
	"path/filepath"
	"time"
)

// record is the durable state of a transaction, rewritten atomically at each
// state change. Recover trusts nothing else.
type record struct {
	ID        string                 `json:"id"`
	MemoryDir string                 `json:"memory_dir"`
	PID       int                    `json:"pid"`
	State     string                 `json:"state"`
	CreatedAt time.Time              `json:"created_at"`
	Base      map[string]fingerprint `json:"base,omitempty"`
	// Staged is what each base file looked like in staging right after
	// Begin: a staged file whose stat still matches was not written.
	Staged map[string]fingerprint `json:"staged,omitempty"`
	// Linked: unchanged files are staged as hard links to the originals.
	Linked bool `json:"linked,omitempty"`
	// Kept are paths left out of the transaction (Txn.Keep): whatever
	// staging holds for them, the commit leaves the memory's file alone.
	Kept []string `json:"kept,omitempty"`
	// Changes is filled when the state becomes committing: what to redo.
	Changes []recChange `json:"changes,omitempty"`
	// ParkReason says why a parked transaction waits for review (the
	// caller's words, e.g. "review requested" or "loss guard: ..."), so
	// that whoever is asked to apply it can tell a policy from a choice.
	ParkReason string `json:"park_reason,omitempty"`
	// Units is the caller's account of what a parked transaction changes
	// (for a dream: the units it removed or rewrote), opaque here, kept
	// for whoever reviews it and for the record its apply writes.
	Units []json.RawMessage `json:"units,omitempty"`
}

// recChange is a Change plus what a roll-forward needs to redo it
// idempotently.
type recChange struct {
	Change
	NewSHA256 string      `json:"new_sha256,omitempty"`
	Mode      os.FileMode `json:"mode,omitempty"`
}

const recordName = "txn.json"

// decodeRecord parses and validates a record, so that a damaged or hostile
// file cannot steer a roll-forward outside the memory dir.
func decodeRecord(data []byte) (record, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return record{}, fmt.Errorf("decode txn record: %w", err)
	}
	if err := validID(r.ID); err != nil {
		return record{}, fmt.Errorf("decode txn record: %w", err)
	}
	switch r.State {
	case StateStaging, StateCommitting, StateCommitted, StateParked:
	default:
		return record{}, fmt.Errorf("decode txn record %s: unknown state %q", r.ID, r.State)
	}
	for p := range r.Base {
		if err := validRel(p); err != nil {
			return record{}, fmt.Errorf("decode txn record %s: base: %w", r.ID, err)
		}
	}
	for p := range r.Staged {
		if err := validRel(p); err != nil {
			return record{}, fmt.Errorf("decode txn record %s: staged: %w", r.ID, err)
		}
	}
	for _, c := range r.Changes {
		if err := validRel(c.Path); err != nil {
			return record{}, fmt.Errorf("decode txn record %s: change: %w", r.ID, err)
		}
		switch c.Kind {
		case Added, Modified:
			if c.NewSHA256 == "" {
				return record{}, fmt.Errorf("decode txn record %s: change %s has no content hash", r.ID, c.Path)
			}
		case Deleted:
		default:
			return record{}, fmt.Errorf("decode txn record %s: change %s has unknown kind %q", r.ID, c.Path, c.Kind)
		}
	}
	return r, nil
}

// validRel accepts a slash path that stays inside the memory dir and is not
// one of dream's own files.
func validRel(p string) error {
	if p == "" || !filepath.IsLocal(filepath.FromSlash(p)) || filepath.ToSlash(filepath.Clean(filepath.FromSlash(p))) != p {
		return fmt.Errorf("unsafe path %q", p)
	}
	for _, el := range splitSlash(p) {
		if Ignored(el) {
			return fmt.Errorf("path %q names a file dream never journals", p)
		}
	}
	return nil
}

func splitSlash(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

func readRecord(txnDir string) (record, error) {
	data, err := os.ReadFile(filepath.Join(txnDir, recordName))
	if err != nil {
		return record{}, fmt.Errorf("read txn record: %w", err)
	}
	return decodeRecord(data)
}

func writeRecord(txnDir string, r record) error {
	// Compact: a memory of 30,000 files has a record of that many entries.
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode txn record %s: %w", r.ID, err)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(txnDir, recordName), append(data, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("save txn record %s: %w", r.ID, err)
	}
	return nil
}
