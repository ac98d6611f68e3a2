package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/dreamkit/dream/settings"
)

func cmdConfig(a *app, args []string) error {
	if _, err := a.standardCommand("config", args, nil); err != nil {
		return err
	}
	type row struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Source string `json:"source"`
	}
	var rows []row
	for _, k := range settings.Keys() {
		rows = append(rows, row{k.Name, a.loaded.Value(k.Name), a.loaded.Source[k.Name]})
	}
	if a.jsonOut {
		a.printJSON(rows)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, r := range rows {
		v := r.Value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Key, v, r.Source)
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "\nuser file: %s\n", settings.UserFile(a.env, a.home()))
	return nil
}
