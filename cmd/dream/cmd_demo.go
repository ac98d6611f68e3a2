package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/demo"
)

func cmdDemo(a *app, args []string) error {
	var keep bool
	var dir string
	if _, err := a.standardCommand("demo", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&keep, "keep", false, "keep the temp dir afterwards to look around")
		fs.StringVar(&dir, "dir", "", "materialise the example here instead of a new temp dir")
	}); err != nil {
		return err
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "dream-demo-")
		if err != nil {
			return err
		}
		dir = tmp
		if !keep {
			defer os.RemoveAll(tmp)
		}
	}
	layout, err := demo.Materialize(dir, time.Now())
	if err != nil {
		return fmt.Errorf("preparing the demo: %w", err)
	}
	s := a.loaded.Settings
	s.MemoryDir, s.SessionsDir, s.Repo = layout.MemoryDir, layout.SessionsDir, layout.RepoDir
	s.StateDir = filepath.Join(dir, "state")
	s.Host = ""
	a.loaded.Settings = s

	choice, err := dream.ChooseProvider(s, a.getenv)
	if err != nil {
		return usagef("%v", err)
	}
	w := a.stdout
	if !a.jsonOut {
		fmt.Fprintf(w, "dream demo: a memory with planted defects, %s\n", layout.Root)
		fmt.Fprintf(w, "  memory:   %s\n  sessions: %s\n  repo:     %s\n", layout.MemoryDir, layout.SessionsDir, layout.RepoDir)
		if choice.Provider == nil {
			fmt.Fprintf(w, "  engine:   offline (%s): zero tokens, nothing leaves this machine\n\n", choice.Why)
		} else {
			fmt.Fprintf(w, "  engine:   %s %s (%s)\n\n", choice.Name, choice.Model, choice.Why)
		}
	}
	view := newProgressView(a.stderr, isTerminal(a.stderr), a.jsonOut)
	d, err := a.dreamer(dream.RunnerFor(choice, s), choice, view.on)
	if err != nil {
		return err
	}
	defer d.Close()
	if st, err := d.Status(a.ctx); err == nil && !a.jsonOut {
		fmt.Fprintf(w, "status before: %d sessions since the last dream, next gate: %s\n\n", st.SessionsTouchedSince, st.Next)
	}
	rep, err := d.StartManual(a.ctx)
	view.done()
	if a.jsonOut {
		a.printJSON(rep)
		if err != nil {
			return reported(exitFailed, err)
		}
		return nil
	}
	printReport(w, rep)
	if err != nil {
		return reported(exitFailed, err)
	}
	if rep.TaskID != "" && len(rep.Changes) > 0 {
		if e, err := d.Show(a.ctx, rep.TaskID); err == nil {
			fmt.Fprintln(w)
			writeDiff(w, e.Diff, isTerminal(w))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Point dream at your own agent:")
	fmt.Fprintln(w, "  dream status --host claude            # Claude Code's memory for the repo in the current directory")
	fmt.Fprintln(w, "  dream run --host claude --review      # a dream whose changes wait for dream diff / apply")
	fmt.Fprintln(w, "  dream run --memory-dir DIR --sessions-dir DIR --repo DIR")
	fmt.Fprintln(w, "  dream maybe --host claude             # from an idle or stop hook: dreams only when every gate opens")
	if keep {
		fmt.Fprintf(w, "\nthe demo stays in %s (state dir: %s)\n", dir, s.StateDir)
	}
	return nil
}
