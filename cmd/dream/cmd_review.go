package main

import (
	"fmt"
	"io"

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
	changes, diff, err := d.StagedDiff(pos[0])
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(map[string]any{"id": pos[0], "changes": changes, "diff": diff})
		return nil
	}
	printChanges(a.stdout, changes)
	writeDiff(a.stdout, diff, isTerminal(a.stdout))
	return nil
}

// printChanges lists the files a dream changes, then a blank line before
// the diff: `dream diff ID` and `dream run --dry-run` print alike.
func printChanges(w io.Writer, changes []dream.Change) {
	for _, c := range changes {
		fmt.Fprintf(w, "  %-8s %s +%d -%d\n", c.Kind, c.Path, c.Added, c.Removed)
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
	if err != nil {
		return err
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
		return err
	}
	fmt.Fprintf(a.stdout, "discarded the staged changes of %s; the memory is unchanged\n", pos[0])
	return nil
}
