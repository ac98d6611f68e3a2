//go:build unix

package lock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAcquireComplete measures one uncontended TryAcquire + Complete,
// the lock's whole cost per dream, against the agents' write-then-reread
// acquisition and empty-body release on the same disk in the same run. It
// reports both in ns and their ratio as "x-seeds"; the ratio is the price of
// the flock, the fsynced guard record, and the fsynced in-place body write.
func BenchmarkAcquireComplete(b *testing.B) {
	dir := b.TempDir()
	l := New(dir, filepath.Join(dir, "state", "guard"))
	seedsDir := filepath.Join(dir, "seeds")
	if err := os.Mkdir(seedsDir, 0o755); err != nil {
		b.Fatal(err)
	}
	seedsPath := filepath.Join(seedsDir, FileName)
	pid := os.Getpid()
	var ours, seeds time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := l.TryAcquire(); err != nil {
			b.Fatal(err)
		}
		if err := l.Complete(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if !seedsAcquire(seedsPath, pid) {
			b.Fatal("uncontended seeds acquisition lost")
		}
		if err := os.WriteFile(seedsPath, nil, 0o644); err != nil {
			b.Fatal(err)
		}
		ours += mid.Sub(start)
		seeds += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(ours.Nanoseconds())/n, "ns-dream/op")
	b.ReportMetric(float64(seeds.Nanoseconds())/n, "ns-seeds/op")
	b.ReportMetric(float64(ours)/float64(seeds), "x-seeds")
}

// BenchmarkVerify measures the takeover check a dream runs at each stage
// boundary, against one os.Stat of the lock file in the same run, and
// reports the ratio as "x-stat".
func BenchmarkVerify(b *testing.B) {
	dir := b.TempDir()
	l := New(dir, filepath.Join(dir, "state", "guard"))
	if _, err := l.TryAcquire(); err != nil {
		b.Fatal(err)
	}
	defer l.Complete()
	var verify, stat time.Duration
	for b.Loop() {
		start := time.Now()
		if err := l.Verify(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := os.Stat(l.Path()); err != nil {
			b.Fatal(err)
		}
		verify += mid.Sub(start)
		stat += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(verify.Nanoseconds())/n, "ns-verify/op")
	b.ReportMetric(float64(stat.Nanoseconds())/n, "ns-stat/op")
	b.ReportMetric(float64(verify)/float64(stat), "x-stat")
}
