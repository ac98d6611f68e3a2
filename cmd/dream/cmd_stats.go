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
	st, err := a.stats(since)
	if err != nil {
		return err
	}
	sp, err := a.spendStats(since)
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(statsView{st, sp})
		return nil
	}
	fmt.Fprintln(a.stdout, st.String())
	printSpendStats(a.stdout, sp)
	return nil
}

// stats summarises the telemetry since, kept to the memory dir the location
// flags name, if any.
func (a *app) stats(since time.Time) (telemetry.Stats, error) {
	log := telemetry.Open(a.loaded.Settings.StateDir)
	scope, err := a.memoryScope()
	if err != nil || scope == "" && a.job == "" {
		if err != nil {
			return telemetry.Stats{}, err
		}
		return log.Stats(since)
	}
	events, malformed, err := log.ReadCounting(since)
	if err != nil {
		return telemetry.Stats{}, err
	}
	kept := events[:0]
	for _, e := range events {
		if a.shows(scope, e.MemoryDir, e.Job) {
			kept = append(kept, e)
		}
	}
	st := telemetry.Summarize(kept, since)
	st.Malformed = malformed
	return st, nil
}
