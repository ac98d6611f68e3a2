// Command auditrecord drives the audit history's two big records for
// bench/audit_record.sh, one step per invocation so the script can time
// each against plain git on a copy of the same dir:
//
//	auditrecord change -dir D -n N        rewrite N topic files (deterministic)
//	auditrecord first -memory-dir M -state-dir S
//	auditrecord dream -memory-dir M -state-dir S -n N
//	auditrecord touch -dir D              new mtime (and ctime) on every file
//	auditrecord hand -memory-dir M -state-dir S
//	auditrecord settled -memory-dir M -state-dir S -n N
//	auditrecord wait -state-dir S         until a background pack is done
//
// "change" appends one line to the first N topic files in path order (every
// file but MEMORY.md), as an offline dream dating or merging them would;
// "dream" records exactly those paths, as the pipeline does with a dream's
// touched files. "settled" is a whole dream's two records on a settled
// memory: the hand-edit record before it (nothing to record), then the
// change of N files and the dream's record of them.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/dreamkit/dream/internal/audit"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fl := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fl.String("dir", "", "memory dir to change")
	mem := fl.String("memory-dir", "", "memory dir")
	state := fl.String("state-dir", "", "state dir")
	n := fl.Int("n", 22000, "number of files")
	_ = fl.Parse(os.Args[2:])
	ctx := context.Background()
	var err error
	switch os.Args[1] {
	case "change":
		err = change(*dir, *n)
	case "first", "hand":
		err = first(ctx, *mem, *state)
	case "touch":
		err = touch(*dir)
	case "dream":
		err = dream(ctx, *mem, *state, *n)
	case "settled":
		err = settled(ctx, *mem, *state, *n)
	case "wait":
		err = wait(*state)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "auditrecord:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: auditrecord change|first|dream|touch|hand|settled|wait [flags]")
	os.Exit(2)
}

// topics lists the first n topic files of dir (all when n < 0), slash
// paths in order.
func topics(dir string, n int) ([]string, error) {
	var all []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() == "MEMORY.md" {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		all = append(all, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(all)
	if n >= 0 && n < len(all) {
		all = all[:n]
	}
	return all, nil
}

func change(dir string, n int) error {
	paths, err := topics(dir, n)
	if err != nil {
		return err
	}
	return appendLine(dir, paths)
}

// appendLine appends one line to each of paths, as a dream dating them
// would.
func appendLine(dir string, paths []string) error {
	for _, p := range paths {
		f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(p)), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, werr := f.WriteString("- Dated by the dream: 2026-12-01.\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
	}
	return nil
}

// touch gives every file of dir a new mtime, its bytes unchanged, as a
// copy that keeps contents but not times would.
func touch(dir string) error {
	paths, err := topics(dir, -1)
	if err != nil {
		return err
	}
	later := time.Now().Add(-time.Hour)
	for _, p := range append(paths, "MEMORY.md") {
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), later, later); err != nil {
			return err
		}
	}
	return nil
}

func first(ctx context.Context, mem, state string) error {
	h, err := audit.Open(ctx, state, mem)
	if err != nil {
		return err
	}
	_, err = h.RecordHandEdits(ctx)
	return err
}

func dream(ctx context.Context, mem, state string, n int) error {
	paths, err := topics(mem, n)
	if err != nil {
		return err
	}
	h, err := audit.Open(ctx, state, mem)
	if err != nil {
		return err
	}
	_, err = h.RecordDream(ctx, audit.Meta{DreamID: "bench-" + time.Now().UTC().Format("20060102-150405"), Status: "completed", Provider: "offline", StartedAt: time.Now(), Kind: audit.KindDream, Paths: paths})
	return err
}

func settled(ctx context.Context, mem, state string, n int) error {
	h, err := audit.Open(ctx, state, mem)
	if err != nil {
		return err
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		return err
	}
	paths, err := topics(mem, n)
	if err != nil {
		return err
	}
	if err := appendLine(mem, paths); err != nil {
		return err
	}
	_, err = h.RecordDream(ctx, audit.Meta{DreamID: "bench-" + time.Now().UTC().Format("20060102-150405.000"), Status: "completed", Provider: "offline", StartedAt: time.Now(), Kind: audit.KindDream, Paths: paths})
	return err
}

// wait returns once no git gc or repack holds the history (git's gc.pid,
// a pack being written), and prints how long it waited for one (0 when
// none ran), so the script can time the background pack.
func wait(state string) error {
	gits, err := filepath.Glob(filepath.Join(state, "audit", "*.git"))
	if err != nil || len(gits) != 1 {
		return fmt.Errorf("want one audit repository under %s, found %d", state, len(gits))
	}
	// A detached gc takes its lock (gc.pid) a moment after the record
	// returns: look for it for a second before deciding nothing runs.
	start := time.Now()
	appear := start.Add(time.Second)
	seen := false
	for {
		busy := false
		if _, err := os.Stat(filepath.Join(gits[0], "gc.pid")); err == nil {
			busy = true // git gc --auto, detached
		}
		if tmp, _ := filepath.Glob(filepath.Join(gits[0], "objects", "pack", "tmp_*")); len(tmp) > 0 {
			busy = true
		}
		seen = seen || busy
		if !busy && (seen || time.Now().After(appear)) {
			secs := 0.0
			if seen {
				secs = time.Since(start).Seconds()
			}
			fmt.Printf("%.2f\n", secs)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}
