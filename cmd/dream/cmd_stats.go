package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/telemetry"
)

func cmdStats(a *app, args []string) error {
	var window time.Duration
	if _, err := a.standardCommand("stats", args, func(fs *flag.FlagSet) {
		fs.DurationVar(&window, "since", 30*24*time.Hour, "the window to summarise, e.g. 168h")
	}); err != nil {
		return err
	}
	since := time.Now().Add(-window)
	// Stats counts the lines it could not read, so an under-count shows.
	st, err := telemetry.Open(a.loaded.Settings.StateDir).Stats(since)
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(st)
		return nil
	}
	fmt.Fprintln(a.stdout, st.String())
	return nil
}
