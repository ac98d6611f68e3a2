// Command genhistory gives a memory dir an audit history of N dreams, each
// rewriting a few topic files, through the audit package itself (the same
// commits `dream run` records), for the `dream log` benchmark.
//
// Usage:
//
//	genhistory -memory-dir M -state-dir S [-dreams 1000]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/audit"
)

func main() {
	mem := flag.String("memory-dir", "", "memory dir (created)")
	state := flag.String("state-dir", "", "state dir")
	n := flag.Int("dreams", 1000, "number of dreams to record")
	flag.Parse()
	if *mem == "" || *state == "" {
		fmt.Fprintln(os.Stderr, "usage: genhistory -memory-dir M -state-dir S [-dreams N]")
		os.Exit(2)
	}
	if err := run(*mem, *state, *n); err != nil {
		fmt.Fprintln(os.Stderr, "genhistory:", err)
		os.Exit(1)
	}
}

func run(mem, state string, n int) error {
	ctx := context.Background()
	if err := os.MkdirAll(mem, 0o755); err != nil {
		return err
	}
	const topics = 50
	write := func(i, rev int) (string, error) {
		rel := fmt.Sprintf("topic_%02d.md", i)
		body := fmt.Sprintf("---\nname: topic %d\ndescription: notes\ntype: project\n---\n\n# Topic %d\n\n- Fact one, revision %d.\n- Fact two stays.\n- 第三条：修订 %d。\n", i, i, rev, rev)
		return rel, os.WriteFile(filepath.Join(mem, rel), []byte(body), 0o644)
	}
	for i := range topics {
		if _, err := write(i, 0); err != nil {
			return err
		}
	}
	h, err := audit.Open(ctx, state, mem)
	if err != nil {
		return err
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		return err
	}
	start := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	for d := 1; d <= n; d++ {
		var paths []string
		for k := 0; k < 1+d%3; k++ {
			p, err := write((d*7+k*13)%topics, d)
			if err != nil {
				return err
			}
			paths = append(paths, p)
		}
		id := fmt.Sprintf("%s-%04x", start.Add(time.Duration(d)*time.Hour).Format("20060102-150405"), d)
		if _, err := h.RecordDream(ctx, audit.Meta{DreamID: id, Status: "completed", Provider: "offline", StartedAt: start.Add(time.Duration(d) * time.Hour), Kind: audit.KindDream, Paths: paths}); err != nil {
			return err
		}
	}
	return nil
}
