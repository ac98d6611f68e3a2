package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dreamkit/dream"
)

func cmdDiff(a *app, args []string) error {
	pos, err := a.standardCommand("diff", args, nil)
	if err != nil {
		return err
	}
	var d *dream.Dreamer
	if len(pos) == 0 {
		d, err = a.memoryDreamer()
	} else {
		d, err = a.memoryDreamerFor(pos[0])
	}
	if err != nil {
		return err
	}
	defer d.Close()
	if len(pos) == 0 {
		staged, err := d.Staged()
		if err != nil {
			return err
		}
		if a.jsonOut {
			a.printJSON(staged)
			return nil
		}
		if len(staged) == 0 {
			fmt.Fprintln(a.stdout, "no staged review runs (dream run --review stages one)")
		}
		for _, s := range staged {
			fmt.Fprintf(a.stdout, "%s  staged %s\n", s.ID, s.CreatedAt.Local().Format("2006-01-02 15:04"))
		}
		return nil
	}
	dd, err := d.Diff(a.ctx, pos[0])
	if err == nil && dd.Source != dream.DiffStaged {
		err = fmt.Errorf("dream %s landed (dream show %s shows it): %w", pos[0], pos[0], dream.ErrNotStaged)
	}
	if err != nil {
		return a.idError(pos[0], err)
	}
	if a.jsonOut {
		a.printJSON(map[string]any{"id": pos[0], "changes": dd.Changes, "diff": dd.Diff, "units": dd.Units, "park_reason": dd.ParkReason})
		return nil
	}
	printChanges(a.stdout, dd.Changes)
	printUnits(a.stdout, dd.Units)
	if len(dd.Units) > 0 {
		fmt.Fprintln(a.stdout)
	}
	writeDiff(a.stdout, dd.Diff, isTerminal(a.stdout))
	return nil
}

// printChanges lists the files a dream changes, then a blank line before
// the diff: `dream diff ID` and `dream run --dry-run` print alike.
func printChanges(w io.Writer, changes []dream.Change) {
	for _, c := range changes {
		fmt.Fprintf(w, "  %-8s %s +%d -%d\n", c.Kind, printable(c.Path), c.Added, c.Removed)
	}
	fmt.Fprintln(w)
}

func cmdApply(a *app, args []string) error {
	pos, err := a.standardCommand("apply", args, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("apply takes one staged dream id (see dream diff)")
	}
	d, err := a.memoryDreamerFor(pos[0])
	if err != nil {
		return err
	}
	defer d.Close()
	changes, commit, err := d.Apply(a.ctx, pos[0])
	var applied *dream.AlreadyAppliedError
	if errors.As(err, &applied) {
		return a.alreadyApplied(applied)
	}
	if err != nil {
		return a.idError(pos[0], err)
	}
	if a.jsonOut {
		a.printJSON(map[string]any{"id": pos[0], "changes": changes, "audit_commit": commit})
		return nil
	}
	fmt.Fprintf(a.stdout, "applied %s: %d file(s) changed; undo with: %s\n", pos[0], len(changes), a.hint("undo", pos[0]))
	return nil
}

func cmdDiscard(a *app, args []string) error {
	pos, err := a.standardCommand("discard", args, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("discard takes one staged dream id (see dream diff)")
	}
	d, err := a.memoryDreamerFor(pos[0])
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Discard(pos[0]); err != nil {
		return a.idError(pos[0], err)
	}
	fmt.Fprintf(a.stdout, "discarded the staged changes of %s; the memory is unchanged\n", pos[0])
	return nil
}

// alreadyApplied answers a second apply: the changes are in the memory
// already, so there is nothing to do and nothing failed (exit 0, as kill of
// a finished dream).
func (a *app) alreadyApplied(e *dream.AlreadyAppliedError) error {
	if a.jsonOut {
		v := map[string]any{"id": e.ID, "already_applied": true, "audit_commit": e.Commit}
		if !e.At.IsZero() {
			v["applied_at"] = e.At.UTC().Format(time.RFC3339)
		}
		a.printJSON(v)
		return nil
	}
	when := ""
	if !e.At.IsZero() {
		when = " at " + e.At.Local().Format("2006-01-02 15:04")
	}
	fmt.Fprintf(a.stdout, "%s was already applied%s (audit commit %s): nothing to do; see it with: %s · undo it with: %s\n", e.ID, when, short(e.Commit), a.hint("show", e.ID), a.hint("undo", e.ID))
	return nil
}
