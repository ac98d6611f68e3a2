package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/demo"
	"github.com/dreamkit/dream/provider"
)

// cmdDemo dreams over the bundled example. The example and its state dir
// stay afterwards (unless --keep=false): the commands the demo prints, such
// as "undo it: dream undo ID --state-dir …", must still work when the
// user pastes them, so the demo says where it lives and how to remove it.
func cmdDemo(a *app, args []string) error {
	keep := true
	var dir string
	if _, err := a.standardCommand("demo", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&keep, "keep", true, "keep the demo dir and its history afterwards, so the printed commands work (--keep=false removes it)")
		fs.StringVar(&dir, "dir", "", "materialise the example in this `DIR` (empty or new) instead of a new temp dir")
	}); err != nil {
		return err
	}
	dir, cleanup, err := demoDir(dir, keep)
	if err != nil {
		return err
	}
	defer cleanup()
	layout, err := a.demoSetup(dir)
	if err != nil {
		return err
	}
	s := a.loaded.Settings
	choice, err := provider.Choose(s, a.getenv)
	if err != nil {
		return usagef("%v", err)
	}
	w := a.stdout
	if !a.jsonOut {
		printDemoIntro(w, layout, choice)
	}
	view := newProgressView(a.narrative(), isTerminal(a.stderr), a.jsonOut)
	d, err := a.dreamer(choice.Runner(s), choice, view.on)
	if err != nil {
		return err
	}
	defer d.Close()
	if st, err := d.Status(a.ctx); err == nil && !a.jsonOut {
		fmt.Fprintf(w, "status before: %d sessions since the last dream, next gate: %s\n\n", st.SessionsTouchedSince, st.Next)
	}
	rep, err := d.Run(a.ctx, dream.RunOptions{})
	view.done()
	if a.jsonOut {
		a.printJSON(rep)
		a.note("%s", demoWhere(dir, keep))
		if err != nil {
			return reported(exitFailed, err)
		}
		return nil
	}
	printReport(w, rep, a.hint)
	if err != nil {
		fmt.Fprintln(w, demoWhere(dir, keep))
		return reported(exitFailed, err)
	}
	if rep.TaskID != "" && len(rep.Changes) > 0 {
		if e, err := d.Show(a.ctx, rep.TaskID); err == nil {
			fmt.Fprintln(w)
			writeDiff(w, e.Diff, isTerminal(w))
		}
	}
	printDemoNext(w)
	fmt.Fprintln(w, demoWhere(dir, keep))
	return nil
}

// demoDir is the demo's absolute dir: dir when given, else a new temp dir
// that cleanup removes unless the demo is kept.
func demoDir(dir string, keep bool) (abs string, cleanup func(), err error) {
	cleanup = func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "dream-demo-")
		if err != nil {
			return "", nil, err
		}
		dir = tmp
		if !keep {
			cleanup = func() { os.RemoveAll(tmp) }
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir, cleanup, nil
}

// demoSetup materialises the example in dir and points the settings at it,
// so that the dream, and every command the demo prints, work on the
// example and never on the user's own memory.
func (a *app) demoSetup(dir string) (demo.Layout, error) {
	layout, err := demo.Materialize(dir, time.Now())
	if err != nil {
		return layout, fmt.Errorf("preparing the demo: %w", err)
	}
	s := a.loaded.Settings
	s.MemoryDir, s.SessionsDir, s.Repo = layout.MemoryDir, layout.SessionsDir, layout.RepoDir
	s.StateDir = filepath.Join(dir, "state")
	s.Host = ""
	a.loaded.Settings = s
	// The demo's history lives in its own state dir, which no later
	// command finds by itself: every command it prints names it.
	a.hintStateDir = s.StateDir
	return layout, nil
}

// printDemoIntro says what the demo dreams over and with which engine,
// before the dream starts, so the user knows whether tokens are spent.
func printDemoIntro(w io.Writer, layout demo.Layout, choice provider.Choice) {
	fmt.Fprintf(w, "dream demo: a memory with planted defects, %s\n", layout.Root)
	fmt.Fprintf(w, "  memory:   %s\n  sessions: %s\n  repo:     %s\n", layout.MemoryDir, layout.SessionsDir, layout.RepoDir)
	if choice.Provider == nil {
		fmt.Fprintf(w, "  engine:   offline (%s): zero tokens, nothing leaves this machine\n\n", choice.Why)
	} else {
		fmt.Fprintf(w, "  engine:   %s %s (%s)\n\n", choice.Name, choice.Model, choice.Why)
	}
}

// printDemoNext ends a successful demo with the commands that point dream
// at the user's own agent.
func printDemoNext(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Point dream at your own agent:")
	fmt.Fprintln(w, "  dream status --host claude            # Claude Code's memory for the repo in the current directory")
	fmt.Fprintln(w, "  dream run --host claude --review      # a dream whose changes wait for dream diff / apply")
	fmt.Fprintln(w, "  dream init claude                     # the hook: after each session, the gates, and a dream in the background")
	fmt.Fprintln(w, "  dream help run                        # --memory-dir, --sessions-dir and --repo for a folder of notes of your own")
	fmt.Fprintln(w)
}

// demoWhere says where the demo stays and how to remove it, or that it is
// already gone and the commands printed for it no longer apply.
func demoWhere(dir string, keep bool) string {
	if !keep {
		return fmt.Sprintf("the demo in %s was removed (--keep=false): the dream show and dream undo commands above no longer apply", dir)
	}
	return fmt.Sprintf("the demo stays in %s, its history in %s, so the commands above work; remove it with: rm -rf %s",
		dir, filepath.Join(dir, "state"), shellQuote(dir))
}
