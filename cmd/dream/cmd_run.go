package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/provider"
)

func cmdRun(a *app, args []string) error {
	var review, dryRun bool
	if _, err := a.standardCommand("run", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&review, "review", false, "stage the changes for dream diff, apply or discard instead of landing them")
		fs.BoolVar(&dryRun, "dry-run", false, "show what a dream would change (the diff of each file) and change nothing")
	}); err != nil {
		return err
	}
	if dryRun && review {
		return usagef("--dry-run and --review exclude each other: a dry run stages nothing to review")
	}
	if a.isNanobot() && !a.isJob() {
		if dryRun {
			return usagef("--dry-run is not available for nanobot's history dream; --review stages it for dream diff instead")
		}
		return runNanobot(a, review)
	}
	d, view, first, err := a.dreamerWithNotice()
	if err != nil {
		return err
	}
	defer d.Close()
	opts := dream.RunOptions{Review: !dryRun && (review || a.loaded.Settings.Review), DryRun: dryRun}
	if !opts.Review && !opts.DryRun && !a.isJob() {
		first.text = a.firstRunNotice(d)
	}
	rep, err := d.Run(a.ctx, opts)
	view.done()
	return a.finishRun(rep, err)
}

// firstRunNotice is what a user whose memory dream has never changed reads
// as the dream starts: that it is about to edit the memory, that every
// change is recorded, and how to undo. Shown until dream has changed the
// memory once (the audit history then holds a dream), on stderr, so --json
// keeps stdout to the report. Empty when there is nothing to say.
func (a *app) firstRunNotice(d *dream.Dreamer) string {
	cfg := d.Config()
	dreamed, err := dream.HasDreamed(a.ctx, cfg.StateDir, cfg.MemoryDir)
	if err != nil || dreamed {
		return ""
	}
	return fmt.Sprintf("dream: first dream on %s: it is about to edit these memory files in place.\n"+
		"  Every change is recorded: the `dream undo` line printed when it ends restores the memory as it is now; list the changes with: %s",
		cfg.MemoryDir, a.hint("log", "--memory-dir", cfg.MemoryDir))
}

// startNotice is said once, at a dream's first progress event: the dream
// has the lock by then, so a run refused because another holds it says
// only that.
type startNotice struct {
	w    io.Writer
	once sync.Once
	text string
}

func (n *startNotice) say() {
	n.once.Do(func() {
		if n.text != "" {
			fmt.Fprintln(n.w, n.text)
		}
	})
}

// dreamerWithProvider builds the Dreamer with the runner the provider
// settings select, and the progress display.
func (a *app) dreamerWithProvider() (*dream.Dreamer, *progressView, error) {
	d, view, _, err := a.dreamerWithNotice()
	return d, view, err
}

// dreamerWithNotice is dreamerWithProvider with a notice the caller may
// fill before the run, said as the dream starts.
func (a *app) dreamerWithNotice() (*dream.Dreamer, *progressView, *startNotice, error) {
	choice, err := a.chooseProvider()
	if err != nil {
		return nil, nil, nil, usagef("%v", err)
	}
	view := newProgressView(a.stderr, isTerminal(a.stderr), a.jsonOut && !isTerminal(a.stderr))
	first := &startNotice{w: a.stderr}
	// The runner is the host's (dream.ConfigForProject): nanobot's history
	// dream on a nanobot workspace, the provider's otherwise.
	d, err := a.dreamer(nil, choice, func(id string, p dream.Progress) {
		first.say()
		view.on(id, p)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	switch {
	case choice.Name != provider.Offline || a.jsonOut:
	case a.isJob():
		a.note("dream: no model (%s): job %s runs its offline engine alone, zero tokens", choice.Why, a.job)
	default:
		a.note("dream: using the offline engine (%s): zero tokens, mechanical fixes only", choice.Why)
		for _, u := range choice.Unused {
			a.note("dream: %s is set but not spent; to give it to dream: %s", u.Var, u.Enable)
		}
	}
	return d, view, first, nil
}

func (a *app) note(format string, args ...any) {
	fmt.Fprintf(a.stderr, format+"\n", args...)
}

// finishRun prints a dream's report and returns its failure as already
// shown. A held lock ran no dream: there is no report, only the error, said
// once (exit 3).
func (a *app) finishRun(rep dream.Report, err error) error {
	if errors.Is(err, dream.ErrLockHeld) {
		return err
	}
	if err != nil && rep.TaskID == "" && !a.jsonOut {
		// Refused before any dream started (the memory is the agent's, a
		// dream already runs here): there is no report to show.
		return err
	}
	if a.jsonOut {
		a.printJSON(rep)
	} else {
		printReport(a.stdout, rep, a.hint)
	}
	if err != nil {
		return reported(exitFailed, err)
	}
	return nil
}
