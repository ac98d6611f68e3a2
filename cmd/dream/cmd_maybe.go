package main

import (
	"errors"
	"fmt"

	"github.com/dreamkit/dream"
)

func cmdMaybe(a *app, args []string) int {
	if _, code, ok := a.standardCommand("maybe", args, nil); !ok {
		return code
	}
	if code, done := a.maybeFastPath(); done {
		return code
	}
	d, view, code, ok := a.dreamerWithProvider()
	if !ok {
		return code
	}
	defer d.Close()
	res, err := d.Maybe(a.ctx)
	view.done()
	if res.Report != nil {
		return a.finishRun(*res.Report, err)
	}
	if a.jsonOut {
		a.printJSON(res)
	} else if res.Gate != "" {
		fmt.Fprintf(a.stdout, "no dream: the %s gate is closed: %s\n", res.Gate, res.Detail)
	}
	if errors.Is(err, dream.ErrLockHeld) {
		return exitHeld
	}
	if err != nil {
		return a.fail(err)
	}
	return exitOK
}
