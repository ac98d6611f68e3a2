package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/provider"
)

// cmdSync pulls and pushes the memory's history through sync_remote, under
// the consolidation lock, as every dream does before and after it runs.
func cmdSync(a *app, args []string) error {
	if _, err := a.standardCommand("sync", args, nil); err != nil {
		return err
	}
	d, err := a.dreamer(nil, provider.Choice{}, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	rep, err := d.Sync(a.ctx)
	if errors.Is(err, dream.ErrNoRemote) {
		return fmt.Errorf("%w (set it in config.toml, DREAM_SYNC_REMOTE or --sync-remote)", err)
	}
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(rep)
		return nil
	}
	w := a.stdout
	fmt.Fprintf(w, "remote: %s\n", rep.Remote)
	switch {
	case rep.Pulled.Commits == 0:
		fmt.Fprintln(w, "pulled: up to date")
	default:
		fmt.Fprintf(w, "pulled: %d commit(s), %s, %d file(s) changed\n", rep.Pulled.Commits, rep.Pulled.Kind, len(rep.Pulled.Files))
		for _, f := range rep.Pulled.Files {
			fmt.Fprintf(w, "  %-8s %s\n", f.Kind, f.Path)
		}
	}
	fmt.Fprintf(w, "pushed: %d commit(s)\n", rep.Pushed)
	fmt.Fprintf(w, "state:  %s\n", describeSync(rep.State.State, rep.State.Ahead, rep.State.Behind, rep.State.Error))
	return nil
}

// printDistributed adds the lock backend's holder and the remote's state to
// `dream status`.
func printDistributed(w io.Writer, s dream.StatusReport) {
	b := s.LockBackend
	if b.Backend != "" && b.Backend != "file" {
		fmt.Fprintf(w, "backend:      %s (%s)\n", b.Backend, b.Where)
		if b.Held {
			holder := b.Reason
			if b.Host != "" {
				holder = fmt.Sprintf("%s pid %d", b.Host, b.PID)
				if b.TaskID != "" {
					holder += " task " + b.TaskID
				}
			}
			fmt.Fprintf(w, "holder:       %s\n", holder)
			if b.LeaseRemaining != nil {
				fmt.Fprintf(w, "lease:        %s left (another machine may take over when it runs out)\n", b.LeaseRemaining.Round(time.Second))
			}
		} else {
			fmt.Fprintf(w, "holder:       none (%s)\n", b.Reason)
		}
	}
	if s.Sync != nil {
		fmt.Fprintf(w, "remote:       %s: %s\n", s.Sync.Remote, describeSync(s.Sync.State, s.Sync.Ahead, s.Sync.Behind, s.Sync.Error))
	}
}

func describeSync(state string, ahead, behind int, errText string) string {
	switch state {
	case "ahead":
		return fmt.Sprintf("ahead by %d commit(s): the next dream or `dream sync` pushes them", ahead)
	case "behind":
		return fmt.Sprintf("behind by %d commit(s): the next dream or `dream sync` pulls them", behind)
	case "diverged":
		return fmt.Sprintf("diverged (%d here, %d there): the next sync merges them", ahead, behind)
	case "nothing local":
		return fmt.Sprintf("nothing here yet, %d commit(s) there: the next dream or `dream sync` pulls them", behind)
	case "remote empty":
		return fmt.Sprintf("the remote is empty, %d commit(s) here: the next dream or `dream sync` pushes them", ahead)
	case "unreachable", "unknown":
		return state + ": " + errText
	}
	return state
}
