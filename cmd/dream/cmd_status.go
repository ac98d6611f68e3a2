package main

import (
	"fmt"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/provider"
)

func cmdStatus(a *app, args []string) error {
	if _, err := a.standardCommand("status", args, nil); err != nil {
		return err
	}
	d, err := a.dreamer(nil, provider.Choice{}, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	s, err := d.Status(a.ctx)
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(statusWithLayout{s, a.layout})
		return nil
	}
	w := a.stdout
	fmt.Fprintf(w, "memory dir:   %s\n", s.MemoryDir)
	if s.SessionsDir != "" {
		fmt.Fprintf(w, "sessions dir: %s\n", s.SessionsDir)
	}
	if s.LastConsolidatedAt != nil {
		fmt.Fprintf(w, "last dream:   %s (%.1fh ago)\n", s.LastConsolidatedAt.Local().Format(time.RFC3339), *s.HoursSinceLast)
	} else {
		fmt.Fprintf(w, "last dream:   never\n")
	}
	holder := "free"
	if s.Lock.Held {
		holder = fmt.Sprintf("held by pid %d", s.Lock.PID)
	}
	if s.Lock.Problem != "" {
		fmt.Fprintf(w, "lock:         UNUSABLE: %s\n", s.Lock.Problem)
	} else {
		fmt.Fprintf(w, "lock:         %s (%s)\n", holder, s.Lock.Reason)
	}
	printLayout(w, a.layout)
	printDistributed(w, s)
	for _, r := range s.Recovered {
		fmt.Fprintf(w, "recovered:    %s\n", r)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning:      %s\n", warn)
	}
	fmt.Fprintln(w)
	for _, g := range s.Gates {
		mark := "open  "
		if !g.Open {
			mark = "CLOSED"
		}
		fmt.Fprintf(w, "  %s  %-9s %s\n", mark, g.Name, g.Detail)
	}
	fmt.Fprintln(w)
	if s.Next == dream.GateReady {
		fmt.Fprintln(w, "next: ready: `dream maybe` would dream now")
	} else {
		fmt.Fprintf(w, "next: the %s gate is closed\n", s.Next)
	}
	return nil
}
