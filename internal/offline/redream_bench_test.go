//go:build unix

package offline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRedream times what a dream after a one-line hand edit costs the
// engine: the memory was dreamed once (its cache is in the state dir), one
// topic file gets a line appended, and offline.Run runs again with the
// leads, as the offline runner calls it. Each iteration edits another file.
// The baseline, run in the same process over the same memory, is one
// os.Stat per memory file: the least any check of "what changed" costs.
// The figure to read is x-stat (the re-dream's time over the baseline's).
// The dream right after the first, which reads once the files the first
// wrote, is logged apart.
//
//	go test -run=^$ -bench=Redream -benchtime=20x ./internal/offline/
//
// DREAM_BENCH_TOPICS sets the memory's size (default 3,000 topic files);
// DREAM_BENCH_MEMORY names a memory dir (bench/cmd/genmemory's) to copy
// instead of the built-in one.
func BenchmarkRedream(b *testing.B) {
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("DREAM_BENCH_TOPICS")); err == nil && v > 0 {
		n = v
	}
	dir := filepath.Join(b.TempDir(), "memory")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if src := os.Getenv("DREAM_BENCH_MEMORY"); src != "" {
		copyTree(b, src, dir)
	} else {
		writeBench(b, dir, n, false)
	}
	cache := filepath.Join(b.TempDir(), "state", "cache.bin")
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ctx := context.Background()
	o := Options{MemoryDir: dir, Now: now, Layout: LayoutFor(""), Leads: true, CacheFile: cache}
	first := time.Now()
	rep, err := Run(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("first dream: %v, %d files written", time.Since(first), len(rep.FilesTouched))
	var rels []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			rels = append(rels, rel)
		}
		return nil
	})
	// Let the first dream's writes age past the cache's racy window, as a
	// dream a day later would find them. The dream after one that wrote
	// files reads those files once (a stat is trusted only when taken past
	// the racy window): it is timed on its own.
	time.Sleep(racyWindow + 50*time.Millisecond)
	second := time.Now()
	if _, err := Run(ctx, o); err != nil {
		b.Fatal(err)
	}
	b.Logf("second dream (reads the %d files the first wrote): %v", len(rep.FilesTouched), time.Since(second))
	baseline := func() time.Duration {
		t0 := time.Now()
		for _, rel := range rels {
			if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(t0)
	}
	var engine, stat, cpu time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		rel := fmt.Sprintf("topic_%05d.md", (i*7919)%n)
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			rel = rels[(i*7919)%len(rels)]
		}
		f, err := os.OpenFile(filepath.Join(dir, rel), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "- a line added by hand, number %d\n", i)
		f.Close()
		stat += baseline()
		b.StartTimer()
		t0, c0 := time.Now(), cpuTime()
		if _, err := Run(ctx, o); err != nil {
			b.Fatal(err)
		}
		engine += time.Since(t0)
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(engine.Microseconds())/float64(b.N)/1000, "ms/redream")
	b.ReportMetric(float64(stat.Microseconds())/float64(b.N)/1000, "ms/stat-all")
	b.ReportMetric(float64(engine)/float64(stat), "x-stat")
	// CPU time is what the re-dream costs; wall time on a loaded machine is
	// mostly waiting for a core.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/redream")
}
