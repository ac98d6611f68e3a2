package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/dreamkit/dream/internal/trust"
	"github.com/dreamkit/dream/settings"
)

// cmdTrust allows a project's .dream.toml to set every key, records it by
// path and content hash in the user's state dir, lists what is trusted, or
// takes the trust back. Until then a project file may only tighten the
// harmless keys (gates, budgets, pins, review): it came with the repository,
// not from the user.
func cmdTrust(a *app, args []string) error {
	var remove, list bool
	pos, err := a.standardCommand("trust", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&remove, "remove", false, "take the trust back")
		fs.BoolVar(&list, "list", false, "list the trusted project files")
	})
	if err != nil {
		return err
	}
	store := trust.Open(trust.DefaultPath(settings.StateDir(a.env, a.home())))
	if list {
		if remove || len(pos) > 0 {
			return usagef("trust --list takes no path and no --remove")
		}
		return a.listTrusted(store)
	}
	if len(pos) > 1 {
		return usagef("trust takes one path at most; got %d", len(pos))
	}
	path := a.projectFile
	if len(pos) == 1 {
		path = pos[0]
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			path = filepath.Join(path, settings.ProjectFileName)
		}
	}
	if path == "" {
		return usagef("no project file: pass its path (dream trust PATH)")
	}
	if remove {
		removed, err := store.Remove(path)
		if err != nil {
			return err
		}
		if a.jsonOut {
			a.printJSON(map[string]any{"path": path, "removed": removed})
		} else if removed {
			fmt.Fprintf(a.stdout, "no longer trusted: %s\n", path)
		} else {
			fmt.Fprintf(a.stdout, "was not trusted: %s\n", path)
		}
		return nil
	}
	e, err := store.Add(path)
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(e)
		return nil
	}
	fmt.Fprintf(a.stdout, "trusted %s (sha256 %s)\n", e.Path, e.SHA256[:16])
	fmt.Fprintln(a.stdout, "it may now set every key; any change to the file drops the trust (dream trust --remove takes it back)")
	return nil
}

// listTrusted prints the store, saying for each entry whether the file still
// has the trusted content.
func (a *app) listTrusted(store *trust.Store) error {
	entries, err := store.List()
	if err != nil {
		return err
	}
	type row struct {
		trust.Entry
		State string `json:"state"`
	}
	rows := make([]row, 0, len(entries))
	for _, e := range entries {
		state := "trusted"
		b, err := os.ReadFile(e.Path)
		switch {
		case err != nil:
			state = "missing"
		case trust.Digest(b) != e.SHA256:
			state = "changed since (not trusted)"
		}
		rows = append(rows, row{e, state})
	}
	if a.jsonOut {
		a.printJSON(rows)
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, "no trusted project files")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tSTATE\tTRUSTED AT")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Path, r.State, r.TrustedAt.Format("2006-01-02 15:04"))
	}
	tw.Flush()
	return nil
}
