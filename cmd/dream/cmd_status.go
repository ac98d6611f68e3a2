package main

import (
	"fmt"
	"io"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/offline"
)

// cmdStatus says where dream reads and writes, who holds the lock, what a
// dream would cost, and which gate is closed.
func cmdStatus(a *app, args []string) error {
	if _, err := a.standardCommand("status", args, nil); err != nil {
		return err
	}
	consent := a.consent()
	d, err := a.dreamer(nil, a.estimateBackend(), nil)
	if err != nil {
		if l := a.layout; l != nil && len(l.Elsewhere) > 0 {
			// The dir dream follows may not exist because the agent uses
			// another one: say which, and why.
			e := l.Elsewhere[0]
			return fmt.Errorf("%w\n%s: %s %s is not followed: %s", err, l.Host, e.What, e.Path, e.From)
		}
		if l := a.layout; l != nil && a.loaded.Settings.MemoryDir == "" && !dirExists(l.MemoryDir) {
			return a.statusNoMemory(l)
		}
		return err
	}
	defer d.Close()
	s, err := d.Status(a.ctx)
	if err != nil {
		return err
	}
	ix, err := a.indexStatus(s.MemoryDir)
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("measuring the index: %v", err))
	}
	cost, err := d.Estimate(a.ctx)
	if err != nil {
		cost.Refusal = err.Error()
	}
	if a.jsonOut {
		a.printJSON(statusWithCost{statusWithLayout{s, a.layout, ix}, consent, cost})
		return nil
	}
	w := a.stdout
	a.printStatusPlaces(w, s)
	printLayout(w, a.layout)
	printIndex(w, ix)
	printConsent(w, consent)
	printCost(w, cost, a.loaded.Settings)
	printDistributed(w, s)
	for _, r := range s.Recovered {
		fmt.Fprintf(w, "recovered:    %s\n", r)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning:      %s\n", warn)
	}
	printGates(w, s)
	return nil
}

// printStatusPlaces writes the first lines of `dream status`: the dirs,
// the last dream and the lock's holder.
func (a *app) printStatusPlaces(w io.Writer, s dream.StatusReport) {
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
}

// printGates writes the gate table that ends `dream status`, and the
// verdict: whether `dream maybe` would dream now, else which gate stops it.
func printGates(w io.Writer, s dream.StatusReport) {
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
}

// indexState is what `dream status` says of the memory's index: which file
// it is under the layout the dream would use (the agent named, the one the
// memory's own files name, or any that keeps a MEMORY.md index), its size
// as that agent counts it, and the rule, with where it was read.
type indexState struct {
	// Layout is the agent whose layout decided ("" when none was named
	// or recognised); Recognized which file named it.
	Layout     string `json:"layout"`
	Recognized string `json:"recognized,omitempty"`
	// None says why there is no index to count.
	None string `json:"none,omitempty"`
	*offline.IndexState
}

func (a *app) indexStatus(mem string) (*indexState, error) {
	name := a.loaded.Settings.Host
	if a.layout != nil {
		name = a.layout.Host
	}
	l := offline.LayoutIn(name, mem)
	st := &indexState{Layout: l.Host, Recognized: l.Recognized}
	if l.Index == "" {
		st.None = "this layout keeps no index: every file is memory in its own right"
		return st, nil
	}
	ix, err := offline.MeasureIndex(mem, l)
	if err != nil {
		return nil, err
	}
	if ix == nil {
		ix = &offline.IndexState{File: l.Index, Limit: l.Limit}
		st.None = l.Index + " does not exist yet"
	}
	st.IndexState = ix
	return st, nil
}

// printIndex writes the index's lines of `dream status`.
func printIndex(w io.Writer, st *indexState) {
	if st == nil {
		return
	}
	layout := st.Layout
	if layout == "" {
		layout = "no agent named"
	}
	if st.Recognized != "" {
		layout = st.Recognized
	}
	if st.IndexState == nil {
		fmt.Fprintf(w, "index:        none (%s): %s\n", layout, st.None)
		return
	}
	lim := st.Limit
	if st.None != "" {
		fmt.Fprintf(w, "index:        %s (%s)\n", st.None, layout)
	} else {
		verdict := "within budget"
		if st.OverBudget {
			verdict = "OVER BUDGET: " + st.Message
		}
		fmt.Fprintf(w, "index:        %s: %d lines, %d %s as %s counts it (it loads %s): %s\n", st.File, st.Lines, st.Size, lim.Unit, lim.Agent, lim.Phrase(), verdict)
	}
	fmt.Fprintf(w, "  rule:       %s\n", lim.Rule)
	fmt.Fprintf(w, "  from:       %s\n", lim.Source)
}

// statusNoMemory answers status for an agent that has written no memory
// yet (a fresh Codex home, a project the agent never saved a memory in):
// not a usage error, but the state of things, with what would change it.
func (a *app) statusNoMemory(l *host.Layout) error {
	advice := noMemoryAdvice(l)
	if a.jsonOut {
		a.printJSON(struct {
			MemoryDir    string       `json:"memory_dir"`
			SessionsDir  string       `json:"sessions_dir,omitempty"`
			MemoryExists bool         `json:"memory_exists"`
			Next         string       `json:"next"`
			Advice       string       `json:"advice"`
			Layout       *host.Layout `json:"layout"`
		}{l.MemoryDir, l.SessionsDir, false, "memory", advice, l})
		return nil
	}
	w := a.stdout
	fmt.Fprintf(w, "memory dir:   %s (does not exist yet)\n", l.MemoryDir)
	if l.SessionsDir != "" {
		fmt.Fprintf(w, "sessions dir: %s\n", l.SessionsDir)
	}
	printLayout(w, l)
	fmt.Fprintf(w, "\nnext: nothing to dream yet: %s\n", advice)
	return nil
}
