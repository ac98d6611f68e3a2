package main

import "github.com/dreamkit/dream/cmd/dream/internal/cmdline"

func cmdMaybe(a *app, args []string) error {
	if _, err := a.standardCommand("maybe", args, nil); err != nil {
		return err
	}
	d, view, err := a.dreamerWithProvider()
	if err != nil {
		return err
	}
	defer d.Close()
	res, err := d.MaybeRun(a.ctx)
	view.done()
	if res.Report != nil {
		return a.finishRun(*res.Report, err)
	}
	if err != nil {
		// A held lock is the error's to say (exit 3), once.
		return err
	}
	if a.jsonOut {
		a.printJSON(res)
	} else if res.Gate != "" {
		cmdline.SayGateClosed(a.stdout, res.Gate, res.Detail)
	}
	return nil
}
