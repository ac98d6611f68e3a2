package dream

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkMaybeStartSlowPath measures MaybeStart when the lock-free flag
// cannot answer (a host-driven clock, or the time gate open): the scan
// throttle closed, so the cheap gates are walked on every call, under the
// mutex; 0 allocs, since the probe lives in the Dreamer.
func BenchmarkMaybeStartSlowPath(b *testing.B) {
	root := b.TempDir()
	mem := filepath.Join(root, "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	s := DefaultSettings()
	s.StateDir = filepath.Join(root, "state")
	d, err := New(Config{MemoryDir: mem, StateDir: s.StateDir, Settings: s, Runner: &countingRunner{}, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	d.mu.Lock()
	d.lastScan = now.Add(-time.Minute) // never consolidated: only the throttle is closed
	d.mu.Unlock()
	b.ReportAllocs()
	for b.Loop() {
		d.MaybeStart()
	}
	if d.running {
		b.Fatal("a dream started")
	}
}
