package etcdlock

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dreamkit/dream"
)

// BenchmarkAcquireComplete measures one uncontended TryAcquire + Complete
// with the etcd backend (which also takes the file lock) against the file
// lock alone, interleaved in the same run against the same disk, and
// reports the median of each and their ratio. The etcd figure is a lease
// grant, the mutex transaction, the announce transaction, the fenced
// completion, an unlock and a revoke: five round trips to a loopback etcd.
func BenchmarkAcquireComplete(b *testing.B) {
	dir := b.TempDir()
	fileOnly := dream.FileLock(filepath.Join(dir, "a"), filepath.Join(dir, "a.flock"))
	m := newMachine(b, newPrefix(b), "bench", 10*time.Second)
	mkdir(b, filepath.Join(dir, "a"))
	var fileNs, etcdNs []float64
	for b.Loop() {
		t0 := time.Now()
		if _, err := fileOnly.TryAcquire(); err != nil {
			b.Fatal(err)
		}
		if err := fileOnly.Complete(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := m.lock.TryAcquire(); err != nil {
			b.Fatal(err)
		}
		if err := m.lock.Complete(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		fileNs = append(fileNs, float64(t1.Sub(t0)))
		etcdNs = append(etcdNs, float64(t2.Sub(t1)))
	}
	f, e := median(fileNs), median(etcdNs)
	b.ReportMetric(f, "ns-file-median")
	b.ReportMetric(e, "ns-etcd-median")
	b.ReportMetric(e/f, "x-file")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func mkdir(b *testing.B, p string) {
	if err := mkdirAll(p); err != nil {
		b.Fatal(err)
	}
}

var mkdirAll = func(p string) error { return os.MkdirAll(p, 0o755) }
