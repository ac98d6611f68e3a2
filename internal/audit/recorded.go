package audit

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// A record that staged nothing still asked git whether the index differs
// from HEAD (a record that failed after staging leaves the index ahead of
// HEAD, and the next record commits what it staged), a git process of its
// own in every dream's hand-edit record, which almost always finds the
// memory as the last dream left it. So each record that leaves the index
// equal to HEAD notes HEAD and the index's own checksum (the hash over its
// content git writes as its last bytes), and a record that staged nothing
// skips the question when both are still the ones noted: an index with the
// same checksum holds the same entries, the ones HEAD's tree was written
// from. Anything else that writes the index (a failed record's staging, a
// refresh, a sync's read-tree) changes its checksum, anything that moves
// HEAD changes HEAD, and a missing or unreadable note only costs the
// question.

// recordedName is the note, in the history's git dir.
const recordedName = "dream-recorded"

// noteRecorded notes that the index now equals HEAD. Failing to is no
// error: the next record asks git.
func (h *History) noteRecorded(head string) {
	sum, ok := h.indexChecksum(len(head) / 2)
	if !ok {
		_ = os.Remove(filepath.Join(h.gitDir, recordedName))
		return
	}
	_ = os.WriteFile(filepath.Join(h.gitDir, recordedName), []byte(head+" "+sum+"\n"), 0o600)
}

// indexIsHead reports whether the index is still the one noted with HEAD.
func (h *History) indexIsHead() bool {
	note, err := os.ReadFile(filepath.Join(h.gitDir, recordedName))
	if err != nil {
		return false
	}
	head, sum, ok := strings.Cut(strings.TrimSpace(string(note)), " ")
	if !ok || !isObjectID(head) {
		return false
	}
	cur, ok := h.readHead()
	if !ok || cur != head {
		return false
	}
	now, ok := h.indexChecksum(len(head) / 2)
	return ok && now == sum
}

// indexChecksum is the trailing hash of the index file, size bytes long;
// ok is false without an index or when git wrote no hash (index.skipHash
// leaves it zero).
func (h *History) indexChecksum(size int) (string, bool) {
	f, err := os.Open(filepath.Join(h.gitDir, "index"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() < int64(12+size) {
		return "", false
	}
	sum := make([]byte, size)
	if _, err := f.ReadAt(sum, info.Size()-int64(size)); err != nil || bytes.Count(sum, []byte{0}) == size {
		return "", false
	}
	return hex.EncodeToString(sum), true
}
