package main

import (
	"errors"
	"fmt"
	"github.com/dreamkit/dream/internal/task"
	"strings"
	"text/tabwriter"
	"time"
)

func cmdTasks(a *app, args []string) error {
	if _, err := a.standardCommand("tasks", args, nil); err != nil {
		return err
	}
	reg, err := task.Open(a.loaded.Settings.StateDir)
	if err != nil {
		return err
	}
	all, err := reg.List()
	if err != nil {
		return err
	}
	scope, err := a.memoryScope()
	if err != nil {
		return err
	}
	var entries []task.Entry
	for _, e := range all {
		if a.shows(scope, e.MemoryDir, e.Job) {
			entries = append(entries, e)
		}
	}
	if a.jsonOut {
		if entries == nil {
			entries = []task.Entry{}
		}
		a.printJSON(entries)
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stdout, "no dreams yet")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tPHASE\tSTARTED\tSTEPS\tTOOLS\tTOKENS\tFILES\tMEMORY DIR")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", e.ID, e.Status, e.Phase,
			e.StartedAt.Local().Format("01-02 15:04"), len(e.Turns), e.ToolCalls, humanCount(e.Usage.Total()),
			oneLine(strings.Join(e.FilesTouched, ","), 40), e.MemoryDir+jobNote(e))
	}
	tw.Flush()
	for _, e := range entries {
		if e.Status == task.StatusRunning {
			fmt.Fprintf(a.stdout, "\n%s running for %s%s; recent turns:\n", e.ID, time.Since(e.StartedAt).Round(time.Second), jobNote(e))
			for _, t := range e.Turns {
				fmt.Fprintf(a.stdout, "  - %s\n", oneLine(t, 120))
			}
		}
	}
	return nil
}

func cmdKill(a *app, args []string) error {
	pos, err := a.standardCommand("kill", args, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("kill takes one task id (see dream tasks)")
	}
	// An id is enough; the location flags, when given, only make sure it
	// is a dream of that memory (a job's dream is no memory's).
	scope, err := a.memoryScope()
	if err != nil {
		return err
	}
	state := a.loaded.Settings.StateDir
	reg, err := task.Open(state)
	if err != nil {
		return err
	}
	if cur, err := reg.Get(pos[0]); err == nil && cur.Job == "" && !inScope(scope, cur.MemoryDir) {
		return usagef("%s is a dream of %s, not of %s (dream tasks lists them)", cur.ID, cur.MemoryDir, scope)
	}
	// Wait for the dream to acknowledge, so the user knows it rolled back.
	e, err := reg.KillWait(a.ctx, pos[0], 10*time.Second)
	switch {
	case errors.Is(err, task.ErrFinished):
		if a.jsonOut {
			a.printJSON(e)
			return nil
		}
		fmt.Fprintf(a.stdout, "%s already %s; nothing to kill\n", e.ID, e.Status)
		return nil
	case errors.Is(err, task.ErrNotFound):
		return fmt.Errorf("no dream %q among the running and recent ones in %s (dream tasks lists them)", pos[0], state)
	case a.ctx.Err() != nil:
		return fmt.Errorf("kill %s: %w while waiting for it to stop (see dream tasks)", e.ID, errInterrupted)
	case err != nil:
		return err
	}
	switch {
	case e.Status == task.StatusRunning:
		return fmt.Errorf("asked %s to stop; it has not finished yet (see dream tasks)", e.ID)
	case a.jsonOut:
		a.printJSON(e)
	case e.Status == task.StatusKilled:
		fmt.Fprintf(a.stdout, "%s killed; the memory is unchanged\n", e.ID)
	default:
		fmt.Fprintf(a.stdout, "%s finished as %s before the kill landed (see dream log)\n", e.ID, e.Status)
	}
	return nil
}

// jobNote names a job's task and what it does: " (job health: doing a
// code checkup)"; "" for the memory dream.
func jobNote(e task.Entry) string {
	if e.Job == "" {
		return ""
	}
	if e.Doing != "" {
		return " (job " + e.Job + ": " + e.Doing + ")"
	}
	return " (job " + e.Job + ")"
}
