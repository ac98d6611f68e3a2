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
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/dreamkit/dream"
)

func main() {
	mem := flag.String("memory-dir", "", "memory dir to dream over")
	state := flag.String("state-dir", "", "state dir")
	cpu := flag.String("cpuprofile", "", "write a CPU profile here")
	heap := flag.String("memprofile", "", "write a heap profile (allocations and in-use at the peak sample) here")
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
	d, err := dream.New(dream.Config{MemoryDir: *mem, StateDir: *state, Settings: dream.DefaultSettings(), Runner: &dream.OfflineRunner{}, Provider: "offline"})
	if err != nil {
		fail(err)
	}
	start := time.Now()
	rep, err := d.StartManual(context.Background())
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
	fmt.Printf("status=%s files=%d elapsed=%.3fs\n", rep.Status, len(rep.FilesTouched), elapsed.Seconds())
	if err != nil {
		fmt.Fprintln(os.Stderr, "dream:", err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dreamprof:", err)
	os.Exit(1)
}
