// Command sessionscan counts the session transcripts under DIR modified
// strictly after SINCE-FILE's mtime, exactly as the session gate does. It
// exists so that bench/session_scan.sh can time the gate's scan against
// find(1) on the same tree.
//
//	sessionscan DIR SINCE-FILE [EXCLUDE-ID]
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/dreamkit/dream/internal/gate"
)

func main() {
	if len(os.Args) < 3 || len(os.Args) > 4 {
		fmt.Fprintln(os.Stderr, "usage: sessionscan DIR SINCE-FILE [EXCLUDE-ID]")
		os.Exit(2)
	}
	info, err := os.Stat(os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sessionscan: since file: %v\n", err)
		os.Exit(2)
	}
	exclude := ""
	if len(os.Args) == 4 {
		exclude = os.Args[3]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := gate.CountSessionsTouchedSince(ctx, os.Args[1], info.ModTime(), exclude)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sessionscan: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(n)
}
