package lock

import (
	"testing"
	"time"
)

// FuzzParsePID: any body parses without panicking, and an accepted PID is in
// range.
func FuzzParsePID(f *testing.F) {
	for _, s := range []string{"123", " 42\n", "", "0", "-1", "4194305", "abc", "1 2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pid, ok := parsePID(body)
		if ok != (pid > 0) || pid < 0 || pid > MaxPID {
			t.Fatalf("parsePID(%q) = %d, %v", body, pid, ok)
		}
		// classify must never panic on any body, and never call a garbage
		// PID live.
		h := classify(fileState{exists: true, body: body, mtime: time.Now()}, time.Now(),
			func(int) bool { return true }, false)
		if h.Live != ok {
			t.Fatalf("classify(%q).Live = %v, parse ok %v", body, h.Live, ok)
		}
	})
}

// FuzzParseRecord: any guard file content parses without panicking, and an
// accepted record names a plausible PID.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{
		`{"pid":123,"prior":"2026-01-02T03:04:05.123456789Z","acquired_at":"2026-01-02T04:00:00Z"}`,
		`{"pid":123,"prior":null,"acquired_at":"2026-01-02T04:00:00Z"}`,
		`{"pid":-5}`, `{"pid":1e99}`, `{"pid":12,"prior":"yesterday"}`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := parseRecord(b)
		if ok && (r.PID <= 0 || r.PID > MaxPID) {
			t.Fatalf("parseRecord(%q) accepted pid %d", b, r.PID)
		}
	})
}
