// Command dreamprof runs one offline dream in-process on a memory dir and
// writes CPU and heap profiles of it, so that `go tool pprof -top` shows
// where a dream's time and memory go. The dream is the library's own
// pipeline (lock, journal, audit, tasks, telemetry, offline engine), exactly
// what `dream run --provider offline` runs.
//
// Usage:
//
//	dreamprof -memory-dir M -state-dir S [-cpuprofile cpu.out] [-memprofile heap.out]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

func main() {
	mem := flag.String("memory-dir", "", "memory dir to dream over")
	state := flag.String("state-dir", "", "state dir")
	cpu := flag.String("cpuprofile", "", "write a CPU profile here")
	heap := flag.String("memprofile", "", "write a heap profile (allocations and in-use at the peak sample) here")
	which := flag.String("runner", "offline", "offline: the offline engine; one: rewrite one file (the pipeline's own cost, without the engine)")
	file := flag.String("file", "MEMORY.md", "with -runner one: the file (relative to the memory dir) it appends a line to")
	flag.Parse()
	if *mem == "" || *state == "" {
		fmt.Fprintln(os.Stderr, "usage: dreamprof -memory-dir M -state-dir S [-cpuprofile F] [-memprofile F]")
		os.Exit(2)
	}
	runtime.MemProfileRate = 64 << 10
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	var r dream.Runner = &runner.Offline{StateDir: *state} // as the CLI builds it: audit provenance
	if *which == "one" {
		r = oneFileRunner{file: *file}
	}
	d, err := dream.New(dream.Config{MemoryDir: *mem, StateDir: *state, Settings: settings.DreamDefaults(), Runner: r, Provider: "offline"})
	if err != nil {
		fail(err)
	}
	start := time.Now()
	rep, err := d.Run(context.Background(), dream.RunOptions{})
	elapsed := time.Since(start)
	d.Close()
	if *heap != "" {
		f, err := os.Create(*heap)
		if err != nil {
			fail(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fail(err)
		}
		f.Close()
	}
	fmt.Printf("status=%s id=%s files=%d elapsed=%.3fs own_peak_rss=%s\n", rep.Status, rep.TaskID, len(rep.FilesTouched), elapsed.Seconds(), peakRSS())
	if err != nil {
		fmt.Fprintln(os.Stderr, "dream:", err)
	}
}

// oneFileRunner appends a line to one file (MEMORY.md unless told), as a
// writer that replaces files does: what is left is the pipeline's own cost
// (lock, staging, change detection, commit, audit, tasks, telemetry) for a
// one-file dream.
type oneFileRunner struct{ file string }

func (oneFileRunner) ReplacesFiles() bool { return true }

func (r oneFileRunner) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	p := filepath.Join(job.MemoryDir, filepath.FromSlash(r.file))
	b, err := os.ReadFile(p)
	if err != nil {
		return dream.Outcome{}, err
	}
	b = append(b, []byte(fmt.Sprintf("- [Bench](bench.md) — touched at %s\n", time.Now().Format(time.RFC3339Nano)))...)
	if err := fsutil.WriteFileAtomic(p, b, 0o644, false); err != nil {
		return dream.Outcome{}, err
	}
	job.Progress(dream.Progress{Kind: dream.ProgressFileTouched, Path: r.file})
	return dream.Outcome{FilesTouched: []string{r.file}}, nil
}

// peakRSS is this process's own peak resident set (VmHWM), without the git
// processes it ran; "?" where /proc is not there.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.Join(strings.Fields(v), "")
		}
	}
	return "?"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dreamprof:", err)
	os.Exit(1)
}
