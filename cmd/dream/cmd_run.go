package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/dreamkit/dream/internal/audit"

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
		first.add(a.firstRunNotice(d))
	}
	rep, err := d.Run(a.ctx, opts)
	if !errors.Is(err, dream.ErrLockHeld) {
		first.say()
	}
	view.done()
	return a.finishRun(rep, err)
}

// firstRunNotice is what a user whose memory dream has never changed reads
// as the dream starts: that it is about to edit the memory, that every
// change is recorded, and how to undo. Shown until dream has changed the
// memory once (the audit history then holds a dream), in the dream's
// account (narrative), so --json keeps stdout to the report. Empty when there is nothing to say.
func (a *app) firstRunNotice(d *dream.Dreamer) string {
	cfg := d.Config()
	dreamed, err := audit.Dreamed(a.ctx, cfg.StateDir, cfg.MemoryDir)
	if err != nil || dreamed {
		return ""
	}
	return fmt.Sprintf("dream: first dream on %s: it is about to edit these memory files in place.\n"+
		"  Every change is recorded: the `dream undo` line printed when it ends restores the memory as it is now; list the changes with: %s",
		cfg.MemoryDir, a.hint("log", "--memory-dir", cfg.MemoryDir))
}

// startNotice is said once, as the dream starts (its first progress
// event, or its report when it had none): the dream has the lock by then,
// so a run refused because another holds it, or a closed gate, says only
// that.
type startNotice struct {
	w     io.Writer
	once  sync.Once
	lines []string
}

// add keeps a line to say; an empty one is nothing to say.
func (n *startNotice) add(line string) {
	if line != "" {
		n.lines = append(n.lines, line)
	}
}

func (n *startNotice) say() {
	n.once.Do(func() {
		for _, l := range n.lines {
			fmt.Fprintln(n.w, l)
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
	view := newProgressView(a.narrative(), isTerminal(a.stderr), a.jsonOut && !isTerminal(a.stderr))
	first := &startNotice{w: a.narrative()}
	// The runner is the host's (hostcfg.For): nanobot's history
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
		first.add(fmt.Sprintf("dream: no model (%s): job %s runs its offline engine alone, zero tokens", choice.Why, a.job))
	default:
		first.add(fmt.Sprintf("dream: using the offline engine (%s): zero tokens, mechanical fixes only", choice.Why))
		for _, u := range choice.Unused {
			first.add(fmt.Sprintf("dream: %s is set but not spent; to give it to dream: %s", u.Var, u.Enable))
		}
	}
	return d, view, first, nil
}

// note says one line of a dream's account (see narrative).
func (a *app) note(format string, args ...any) {
	fmt.Fprintf(a.narrative(), format+"\n", args...)
}

// narrative is where a dream's account goes as it runs: the notices (the
// engine chosen and why, a first dream's word on undo), each turn, tool
// call and file written, the leads. On a terminal it is stderr, beside the
// live line, and the report alone goes to stdout; under --json it is
// stderr too, as stdout holds the one JSON value. Otherwise (a log, a pipe,
// CI) it is stdout, so that the account and the report it leads up to stay
// one stream in order: a log that keeps the two streams apart, or only
// stdout, would lose which write came before which line of the report.
// Failures and warnings always go to stderr.
func (a *app) narrative() io.Writer {
	if a.jsonOut || isTerminal(a.stderr) {
		return a.stderr
	}
	return a.stdout
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
