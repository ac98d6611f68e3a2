//go:build unix

package offline

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkFirstDream times the engine's share of a first dream over a big
// memory, as the offline runner calls it on a sparse staging: the memory
// is only read, every changed file is written into an empty write dir, and
// the cache (empty before) receives the analysis of every file, those the
// run wrote included. The baseline, timed in the same loop over the same
// memory, is a plain copy of the memory dir (read and write every file):
// the figure to read is x-copy, the engine's time over the copy's.
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
	var engine, cp, cpu time.Duration
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
		t0, c0 := time.Now(), cpuTime()
		rep, err := Run(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		engine += time.Since(t0)
		cpu += cpuTime() - c0
		files = len(rep.FilesTouched)
	}
	b.ReportMetric(float64(engine.Microseconds())/float64(b.N)/1000, "ms/dream")
	b.ReportMetric(float64(cp.Microseconds())/float64(b.N)/1000, "ms/copy")
	b.ReportMetric(float64(engine)/float64(cp), "x-copy")
	// CPU time is what the dream costs; wall time on a loaded machine is
	// mostly waiting for a core.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/dream")
	b.ReportMetric(float64(files), "files-written")
}
