//go:build unix

package offline

import (
	"context"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFirstDream times the engine's share of a first dream over a big
// memory, as the offline runner calls it on a sparse staging: the memory
// is only read, every changed file is written into an empty write dir, and
// the cache (empty before) receives the analysis of every file, those the
// run wrote included. The baseline, timed in the same loop over the same
// memory, is a plain copy of the memory dir (read and write every file):
// the figure to read is x-copy, the engine's time over the copy's;
// peak-heap-MB is the largest heap of objects sampled during the dreams.
//
//	DREAM_BENCH_TOPICS=3000 go test -run=^$ -bench=FirstDream -benchtime=5x ./internal/offline/
//
// DREAM_BENCH_TOPICS sets the memory's size (default 3,000 topic files);
// DREAM_BENCH_MEMORY names a memory dir (bench/cmd/genmemory's) to read
// instead of the built-in one.
func BenchmarkFirstDream(b *testing.B) {
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("DREAM_BENCH_TOPICS")); err == nil && v > 0 {
		n = v
	}
	dir := os.Getenv("DREAM_BENCH_MEMORY")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "memory")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		writeBench(b, dir, n, false)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ctx := context.Background()
	var engine, cp, cpu, user time.Duration
	var peak uint64
	files := 0
	for b.Loop() {
		b.StopTimer()
		tmp := b.TempDir()
		t0 := time.Now()
		copyTree(b, dir, filepath.Join(tmp, "copy"))
		cp += time.Since(t0)
		o := Options{MemoryDir: dir, WriteDir: filepath.Join(tmp, "staging"), Now: now, Layout: LayoutFor(""), Leads: true,
			CacheFile: filepath.Join(tmp, "state", "cache.bin")}
		b.StartTimer()
		stop := samplePeakHeap(&peak)
		t0, c0, u0 := time.Now(), cpuTime(), userTime()
		rep, err := Run(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		engine += time.Since(t0)
		cpu += cpuTime() - c0
		user += userTime() - u0
		stop()
		files = len(rep.FilesTouched)
	}
	b.ReportMetric(float64(engine.Microseconds())/float64(b.N)/1000, "ms/dream")
	b.ReportMetric(float64(cp.Microseconds())/float64(b.N)/1000, "ms/copy")
	b.ReportMetric(float64(engine)/float64(cp), "x-copy")
	// CPU time is what the dream costs; wall time on a loaded machine is
	// mostly waiting for a core.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/dream")
	// User time alone is the engine's own work: the system time of
	// creating inodes grows with what the other processes on the disk do.
	b.ReportMetric(float64(user.Microseconds())/float64(b.N)/1000, "user-ms/dream")
	b.ReportMetric(float64(files), "files-written")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// samplePeakHeap samples the bytes of live and not yet swept heap objects
// every 5 ms (runtime/metrics, no stop of the world) into *peak, until the
// function it returns is called.
func samplePeakHeap(peak *uint64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > *peak {
				*peak = v
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// userTime is the process's user time so far.
func userTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano())
}
