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
	defer relaxGC()()
	d, err := a.dreamer(nil, provider.Choice{}, nil)
	if err != nil {
		if l := a.layout; l != nil && len(l.Elsewhere) > 0 {
			// The dir dream follows may not exist because the agent uses
			// another one: say which, and why.
			e := l.Elsewhere[0]
			return fmt.Errorf("%w\n%s: %s %s is not followed: %s", err, l.Host, e.What, e.Path, e.From)
		}
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
	if a.isJob() {
		fmt.Fprintf(w, "job:          %s\nwrite dir:    %s\n", a.job, s.MemoryDir)
	} else {
		fmt.Fprintf(w, "memory dir:   %s\n", s.MemoryDir)
	}
	if s.SessionsDir != "" {
		fmt.Fprintf(w, "sessions dir: %s\n", s.SessionsDir)
	}
	if s.LastConsolidatedAt != nil {
		from := ""
		if s.LastConsolidatedFrom != "" {
			from = ", from " + s.LastConsolidatedFrom
		}
		fmt.Fprintf(w, "last dream:   %s (%.1fh ago%s)\n", s.LastConsolidatedAt.Local().Format(time.RFC3339), *s.HoursSinceLast, from)
	} else {
		fmt.Fprintf(w, "last dream:   never\n")
	}
	holder := "free"
	if s.Lock.Held {
		holder = "held"
		if s.Lock.PID > 0 {
			holder = fmt.Sprintf("held by pid %d", s.Lock.PID)
		}
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
