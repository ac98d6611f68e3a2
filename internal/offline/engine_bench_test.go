//go:build unix

package offline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeBench lays out a Claude Code style memory of n topic files: an
// index pointing at nine in ten of them, and topics with frontmatter, nested
// headings, bullets (some repeated inside a file), a numbered procedure, a
// fenced block and a relative date under a dated heading.
// With clean it leaves out every defect (no repeat,
// no relative date, every topic indexed), so that an engine has nothing to
// write and only its reading and analysis are timed.
func writeBench(tb testing.TB, dir string, n int, clean bool) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string { return fmt.Sprintf("w%d", rng.IntN(3000)) }
	sentence := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = word()
		}
		return strings.Join(w, " ")
	}
	var idx strings.Builder
	idx.WriteString("# Memory index\n\n")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("topic_%05d.md", i)
		if i%10 != 3 || clean {
			fmt.Fprintf(&idx, "- [Topic %d](%s) — %s\n", i, name, sentence(6))
		}
		var b strings.Builder
		fmt.Fprintf(&b, "---\nname: topic %d\ndescription: %s\ntype: project\n---\n\n# Topic %d\n\n", i, sentence(5), i)
		fmt.Fprintf(&b, "## Notes\n\n")
		dup := sentence(9)
		for f := 0; f < 6; f++ {
			fmt.Fprintf(&b, "- %s\n", sentence(10))
		}
		fmt.Fprintf(&b, "- %s\n", dup)
		if i%4 == 0 && !clean {
			fmt.Fprintf(&b, "- %s\n", dup)
		}
		fmt.Fprintf(&b, "\n### Procedure\n\n1. %s\n2. %s\n3. %s\n\n", sentence(6), sentence(6), sentence(6))
		fmt.Fprintf(&b, "```sh\ngo test ./... # %s\n```\n\n", sentence(3))
		if clean {
			fmt.Fprintf(&b, "## 2026-11-%02d\n\n- we changed %s\n", 1+i%28, sentence(5))
		} else {
			fmt.Fprintf(&b, "## 2026-11-%02d\n\n- yesterday we changed %s\n", 1+i%28, sentence(5))
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(idx.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// copyFlat copies the flat memory dir src into dst.
func copyFlat(tb testing.TB, src, dst string) {
	tb.Helper()
	es, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range es {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// cpuTime is the process's user plus system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEngine times one offline dream (benchDream: the fixes and the
// leads, without a repository) on memories of 300, 3,000 and 30,000 topic files; the copy of
// the memory each run starts from is not timed. Reading the figures as a
// ratio between sizes shows whether the engine stays linear:
// go test -run=^$ -bench=Engine -benchtime=3x ./internal/offline/
func BenchmarkEngine(b *testing.B) { benchEngine(b, false) }

// BenchmarkEngineClean is BenchmarkEngine on a memory with nothing to fix:
// no file is written, so the figure is the engine's own work (parse,
// analysis, leads) without the disk's fsyncs.
func BenchmarkEngineClean(b *testing.B) { benchEngine(b, true) }

func benchEngine(b *testing.B, clean bool) {
	sizes := []int{300, 3000}
	if os.Getenv("DREAM_BENCH_HUGE") != "" {
		sizes = append(sizes, 30000)
	}
	for _, n := range sizes {
		tmpl := b.TempDir()
		writeBench(b, tmpl, n, clean)
		// workers=1 is the serial engine, the baseline of the parallel
		// one (workers=0: one per processor) in the same run.
		for _, workers := range []int{1, 0} {
			b.Run(fmt.Sprintf("topics=%d/workers=%d", n, workers), func(b *testing.B) {
				now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
				ctx := context.Background()
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					dir := b.TempDir()
					copyFlat(b, tmpl, dir)
					b.StartTimer()
					c0 := cpuTime()
					if err := benchDream(ctx, dir, now, workers); err != nil {
						b.Fatal(err)
					}
					cpu += cpuTime() - c0
				}
				// CPU time (user + system) is what the engine costs; wall time
				// on a loaded machine is mostly waiting for a core.
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
