package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/provider"
)

// memoryDreamer builds a Dreamer for commands that read or change the
// history and need no model.
func (a *app) memoryDreamer() (*dream.Dreamer, error) {
	return a.dreamer(nil, provider.Choice{}, nil)
}

func cmdLog(a *app, args []string) error {
	var limit int
	if _, err := a.standardCommand("log", args, func(fs *flag.FlagSet) {
		fs.IntVar(&limit, "limit", 20, "how many entries at most (0: all)")
	}); err != nil {
		return err
	}
	d, err := a.memoryDreamer()
	if err != nil {
		return err
	}
	defer d.Close()
	entries, err := d.Log(a.ctx, limit)
	if err != nil {
		return err
	}
	if a.jsonOut {
		if entries == nil {
			entries = []dream.HistoryEntry{}
		}
		a.printJSON(entries)
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stdout, "no dreams recorded for this memory dir yet")
		return nil
	}
	for _, e := range entries {
		add, rem := 0, 0
		for _, f := range e.Files {
			add += f.Added
			rem += f.Removed
		}
		fmt.Fprintf(a.stdout, "%-22s %-6s %-9s %s  %d file(s) +%d -%d\n", e.ID, e.Kind, e.Status, e.StartedAt.Local().Format("2006-01-02 15:04"), len(e.Files), add, rem)
		for _, f := range e.Files {
			fmt.Fprintf(a.stdout, "    %-8s %s +%d -%d\n", f.Kind, printable(f.Path), f.Added, f.Removed)
		}
	}
	return nil
}

func cmdShow(a *app, args []string) error {
	pos, err := a.standardCommand("show", args, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("show takes one dream id (see dream log)")
	}
	d, err := a.memoryDreamerFor(pos[0])
	if err != nil {
		return err
	}
	defer d.Close()
	e, err := d.Show(a.ctx, pos[0])
	if err != nil {
		return a.idError(pos[0], err)
	}
	if a.jsonOut {
		a.printJSON(e)
		return nil
	}
	fmt.Fprintf(a.stdout, "%s %s %s (%s) commit %s\n", e.Kind, e.ID, e.Status, e.StartedAt.Local().Format("2006-01-02 15:04:05"), short(e.Commit))
	for _, f := range e.Files {
		fmt.Fprintf(a.stdout, "  %-8s %s +%d -%d\n", f.Kind, printable(f.Path), f.Added, f.Removed)
	}
	printUnits(a.stdout, e.Units)
	fmt.Fprintln(a.stdout)
	writeDiff(a.stdout, e.Diff, isTerminal(a.stdout))
	return nil
}

func cmdUndo(a *app, args []string) error {
	var force bool
	pos, err := a.standardCommand("undo", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&force, "force", false, "restore the files to their pre-dream content even where later changes touched the same lines")
	})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("undo takes one dream id (see dream log)")
	}
	d, err := a.memoryDreamerFor(pos[0])
	if err != nil {
		return err
	}
	defer d.Close()
	e, err := d.Undo(a.ctx, pos[0], force)
	if errors.Is(err, dream.ErrUndoConflict) {
		return &undoConflictError{id: pos[0], err: err, force: a.hint("undo", pos[0], "--force")}
	}
	if err != nil {
		return a.idError(pos[0], err)
	}
	if a.jsonOut {
		a.printJSON(e)
		return nil
	}
	fmt.Fprintf(a.stdout, "undid %s: %d file(s) restored, recorded as %s\n", pos[0], len(e.Files), e.ID)
	for _, f := range e.Files {
		fmt.Fprintf(a.stdout, "  %-8s %s +%d -%d\n", f.Kind, printable(f.Path), f.Added, f.Removed)
	}
	return nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// writeDiff prints a unified diff, coloured on a terminal.
func writeDiff(w io.Writer, diff string, color bool) {
	for _, line := range strings.SplitAfter(diff, "\n") {
		if line == "" {
			continue
		}
		if !color {
			io.WriteString(w, line) // a file or a pipe: the diff as it is, to apply
			continue
		}
		line = printable(strings.TrimSuffix(line, "\n")) + "\n"
		code := ""
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "diff "):
			code = "1"
		case strings.HasPrefix(line, "+"):
			code = "32"
		case strings.HasPrefix(line, "-"):
			code = "31"
		case strings.HasPrefix(line, "@@"):
			code = "36"
		}
		if code == "" {
			io.WriteString(w, line)
			continue
		}
		fmt.Fprintf(w, "\033[%sm%s\033[0m\n", code, strings.TrimSuffix(line, "\n"))
	}
}
