// Package startfloor measures the floor under dream's hook path as a whole
// process: what the dream binary costs before any of dream's code could
// run, and what counting the transcripts costs at best. bench/process_start.sh
// links it into a copy of the dream binary (go build -overlay adds a blank
// import to package main; nothing on disk changes) and times that binary
// beside the real one. Nothing else imports it: its init ends the process.
//
// Go initialises, of the packages whose imports are all initialised, the
// first by import path (the linker orders the packages that have
// initialisation work this way). This package imports only a few packages
// that the runtime's neighbours need anyway, so its init runs after about
// two dozen initialisers, before the SDKs, protobuf, gRPC and the rest of
// dream: no early start inside this binary can answer sooner.
//
//   - `maybe`: prints the closed-gate line and exits 0, having read nothing.
//   - `status --sessions-dir D --lock F`: counts the files directly in D
//     whose mtime is after F's, one fstatat per file relative to the
//     directory, on as many goroutines as GOMAXPROCS, prints the count and
//     exits 0: the least any count of touched transcripts can cost here
//     (it skips what dream status also does: subdirectories, the
//     transcript filter, the gates, the lock holder, the JSON).
package startfloor

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "maybe":
		os.Stdout.WriteString("no dream: the time gate is closed (floor)\n")
		os.Exit(0)
	case "status":
		n, err := countNewer(flagValue("--sessions-dir"), flagValue("--lock"))
		if err != nil {
			os.Stderr.WriteString("startfloor: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(n) + "\n")
		os.Exit(0)
	}
}

// flagValue is the argument after name on the command line, or "".
func flagValue(name string) string {
	for i, a := range os.Args {
		if a == name && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
	}
	return ""
}

// countNewer counts the entries of dir whose mtime is after lock's.
func countNewer(dir, lock string) (int, error) {
	li, err := os.Stat(lock)
	if err != nil {
		return 0, err
	}
	since := li.ModTime().UnixNano()
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	fd := int(d.Fd())
	workers := min(runtime.GOMAXPROCS(0), len(names))
	var next, newer atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(names) {
					return
				}
				if m, err := mtimeAt(fd, dir, names[i]); err == nil && m > since {
					newer.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(newer.Load()), nil
}
