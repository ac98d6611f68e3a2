package main

import (
	"fmt"
)

func cmdDiff(a *app, args []string) int {
	pos, code, ok := a.standardCommand("diff", args, nil)
	if !ok {
		return code
	}
	d, code, ok := a.memoryDreamer()
	if !ok {
		return code
	}
	defer d.Close()
	if len(pos) == 0 {
		staged, err := d.Staged()
		if err != nil {
			return a.fail(err)
		}
		if a.jsonOut {
			a.printJSON(staged)
			return exitOK
		}
		if len(staged) == 0 {
			fmt.Fprintln(a.stdout, "no staged review runs (dream run --review stages one)")
		}
		for _, s := range staged {
			fmt.Fprintf(a.stdout, "%s  staged %s\n", s.ID, s.CreatedAt.Local().Format("2006-01-02 15:04"))
		}
		return exitOK
	}
	changes, diff, err := d.StagedDiff(pos[0])
	if err != nil {
		return a.fail(err)
	}
	if a.jsonOut {
		a.printJSON(map[string]any{"id": pos[0], "changes": changes, "diff": diff})
		return exitOK
	}
	for _, c := range changes {
		fmt.Fprintf(a.stdout, "  %-8s %s +%d -%d\n", c.Kind, c.Path, c.Added, c.Removed)
	}
	fmt.Fprintln(a.stdout)
	writeDiff(a.stdout, diff, isTerminal(a.stdout))
	return exitOK
}

func cmdApply(a *app, args []string) int {
	pos, code, ok := a.standardCommand("apply", args, nil)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return a.fail(usagef("apply takes one staged dream id (see dream diff)"))
	}
	d, code, ok := a.memoryDreamer()
	if !ok {
		return code
	}
	defer d.Close()
	changes, commit, err := d.Apply(a.ctx, pos[0])
	if err != nil {
		return a.fail(err)
	}
	if a.jsonOut {
		a.printJSON(map[string]any{"id": pos[0], "changes": changes, "audit_commit": commit})
		return exitOK
	}
	fmt.Fprintf(a.stdout, "applied %s: %d file(s) changed; undo with: dream undo %s\n", pos[0], len(changes), pos[0])
	return exitOK
}

func cmdDiscard(a *app, args []string) int {
	pos, code, ok := a.standardCommand("discard", args, nil)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return a.fail(usagef("discard takes one staged dream id (see dream diff)"))
	}
	d, code, ok := a.memoryDreamer()
	if !ok {
		return code
	}
	defer d.Close()
	if err := d.Discard(pos[0]); err != nil {
		return a.fail(err)
	}
	fmt.Fprintf(a.stdout, "discarded the staged changes of %s; the memory is unchanged\n", pos[0])
	return exitOK
}
