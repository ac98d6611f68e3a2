package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/dreamkit/dream"
)

func cmdRun(a *app, args []string) error {
	var review bool
	if _, err := a.standardCommand("run", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&review, "review", false, "stage the changes for `dream diff/apply/discard` instead of landing them")
	}); err != nil {
		return err
	}
	if a.isNanobot() {
		return runNanobot(a, review)
	}
	d, view, err := a.dreamerWithProvider()
	if err != nil {
		return err
	}
	defer d.Close()
	rep, err := d.Run(a.ctx, dream.RunOptions{Review: review || a.loaded.Settings.Review})
	view.done()
	return a.finishRun(rep, err)
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
		printReport(a.stdout, rep)
	}
	if err != nil {
		return reported(exitFailed, err)
	}
	return nil
}
