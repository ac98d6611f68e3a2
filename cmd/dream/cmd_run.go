package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/dreamkit/dream"
)

func cmdRun(a *app, args []string) error {
	var review, dryRun bool
	if _, err := a.standardCommand("run", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&review, "review", false, "stage the changes for `dream diff/apply/discard` instead of landing them")
		fs.BoolVar(&dryRun, "dry-run", false, "show what a dream would change (the diff of each file) and change nothing")
	}); err != nil {
		return err
	}
	if dryRun && review {
		return usagef("--dry-run and --review exclude each other: a dry run stages nothing to review")
	}
	if a.isNanobot() {
		if dryRun {
			return usagef("--dry-run is not available for nanobot's history dream; --review stages it for dream diff instead")
		}
		return runNanobot(a, review)
	}
	d, view, err := a.dreamerWithProvider()
	if err != nil {
		return err
	}
	defer d.Close()
	opts := dream.RunOptions{Review: !dryRun && (review || a.loaded.Settings.Review), DryRun: dryRun}
	if !opts.Review && !opts.DryRun {
		a.firstRunNotice(d)
	}
	rep, err := d.Run(a.ctx, opts)
	view.done()
	return a.finishRun(rep, err)
}

// firstRunNotice tells a user whose memory dream has never changed that it
// is about to, that every change is recorded, and how to undo: once, since
// from the next run on the history is not empty. It goes to stderr, so
// --json keeps stdout to the report.
func (a *app) firstRunNotice(d *dream.Dreamer) {
	cfg := d.Config()
	dreamed, err := dream.HasDreamed(a.ctx, cfg.StateDir, cfg.MemoryDir)
	if err != nil || dreamed {
		return
	}
	a.note("dream: first dream on %s: it is about to edit these memory files in place.\n"+
		"  Every change is recorded: the `dream undo` line printed when it ends restores the memory as it is now; list the changes with: %s",
		cfg.MemoryDir, a.hint("log", "--memory-dir", cfg.MemoryDir))
}

// dreamerWithProvider builds the Dreamer with the runner the provider
// settings select, and the progress display.
func (a *app) dreamerWithProvider() (*dream.Dreamer, *progressView, error) {
	choice, err := dream.ChooseProvider(a.loaded.Settings, a.getenv)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	view := newProgressView(a.stderr, isTerminal(a.stderr), a.jsonOut && !isTerminal(a.stderr))
	// The runner is the host's (dream.ConfigForProject): nanobot's history
	// dream on a nanobot workspace, the provider's otherwise.
	d, err := a.dreamer(nil, choice, view.on)
	if err != nil {
		return nil, nil, err
	}
	if choice.Name == dream.ProviderOffline && !a.jsonOut {
		a.note("dream: using the offline engine (%s): zero tokens, mechanical fixes only", choice.Why)
	}
	return d, view, nil
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
