package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/provider"
)

func cmdRun(a *app, args []string) int {
	var review bool
	if _, code, ok := a.standardCommand("run", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&review, "review", false, "stage the changes for `dream diff/apply/discard` instead of landing them")
	}); !ok {
		return code
	}
	if a.isNanobot() {
		return runNanobot(a, review)
	}
	d, view, code, ok := a.dreamerWithProvider()
	if !ok {
		return code
	}
	defer d.Close()
	rep, err := d.Run(a.ctx, dream.RunOptions{Review: review || a.loaded.Settings.Review})
	view.done()
	return a.finishRun(rep, err)
}

// dreamerWithProvider builds the Dreamer with the runner the provider
// settings select, and the progress display.
func (a *app) dreamerWithProvider() (*dream.Dreamer, *progressView, int, bool) {
	choice, err := provider.Choose(a.loaded.Settings, a.getenv)
	if err != nil {
		return nil, nil, a.fail(usagef("%v", err)), false
	}
	view := newProgressView(a.stderr, isTerminal(a.stderr), a.jsonOut && !isTerminal(a.stderr))
	// The runner is the host's (dream.ConfigForProject): nanobot's history
	// dream on a nanobot workspace, the provider's otherwise.
	d, err := a.dreamer(nil, choice, view.on)
	if err != nil {
		return nil, nil, a.fail(err), false
	}
	if choice.Name == provider.Offline && !a.jsonOut {
		a.note("dream: using the offline engine (%s): zero tokens, mechanical fixes only", choice.Why)
	}
	return d, view, 0, true
}

func (a *app) note(format string, args ...any) {
	fmt.Fprintf(a.stderr, format+"\n", args...)
}

// finishRun prints a report and maps it to the exit code.
func (a *app) finishRun(rep dream.Report, err error) int {
	if a.jsonOut {
		a.printJSON(rep)
	} else {
		printReport(a.stdout, rep)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, dream.ErrLockHeld):
		if a.jsonOut {
			return exitHeld
		}
		return a.fail(err)
	default:
		return exitFailed
	}
}
