package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/provider"
)

// defaultSyncWait is how long `dream sync` waits for the consolidation
// lock another sync or dream holds: a sync takes seconds, so two started
// together both land; a dream can take minutes, and it pushes its own
// history when it lands.
const defaultSyncWait = 30 * time.Second

// cmdSync pulls and pushes the memory's history through sync_remote, under
// the consolidation lock, as every dream does before and after it runs.
func cmdSync(a *app, args []string) error {
	var o dream.SyncOptions
	if _, err := a.standardCommand("sync", args, func(fs *flag.FlagSet) {
		fs.DurationVar(&o.Wait, "wait", defaultSyncWait, "how long to wait for the consolidation lock while another sync or dream holds it (0: give up at once, exit 3)")
		fs.BoolVar(&o.Resolved, "resolved", false, "after a conflict: take the conflicting files as you edited them in the memory dir; the merge keeps both histories")
		fs.BoolVar(&o.AdoptRemote, "adopt-remote", false, "after the remote's history was rewritten: take it as it is now, keeping this machine's history in a backup ref")
	}); err != nil {
		return err
	}
	if o.Wait < 0 {
		return usagef("--wait %s: a duration of 0 or more (30s, 5m)", o.Wait)
	}
	if o.Resolved && o.AdoptRemote {
		return usagef("--resolved and --adopt-remote exclude each other: one merges your resolution, the other drops this machine's history for the remote's")
	}
	d, err := a.dreamer(nil, provider.Choice{}, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	rep, err := d.Sync(a.ctx, o)
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
	p := rep.Pulled
	switch {
	case p.Kind == "adopted":
		fmt.Fprintf(w, "adopted the remote's history (head %s), %d file(s) changed\n", shortHead(p.Head), len(p.Files))
	case p.Commits == 0:
		fmt.Fprintln(w, "pulled: up to date")
	default:
		fmt.Fprintf(w, "pulled: %d commit(s), %s, %d file(s) changed\n", p.Commits, p.Kind, len(p.Files))
	}
	for _, f := range p.Files {
		fmt.Fprintf(w, "  %-8s %s\n", f.Kind, f.Path)
	}
	if len(p.Resolved) > 0 {
		fmt.Fprintf(w, "resolved by hand: %s (your text is the merge's)\n", strings.Join(p.Resolved, ", "))
	}
	if p.Backup != "" {
		fmt.Fprintf(w, "backup: %s keeps this machine's history as it was\n", p.Backup)
		if len(p.Unsynced) > 0 {
			fmt.Fprintf(w, "  it holds %d commit(s) made here that never reached the remote, no longer in the memory:\n", len(p.Unsynced))
			for _, c := range p.Unsynced {
				fmt.Fprintf(w, "    %s\n", c)
			}
			fmt.Fprintf(w, "  see them: %s\n", p.ShowBackup)
		}
	}
	fmt.Fprintf(w, "pushed: %d commit(s)\n", rep.Pushed)
	fmt.Fprintf(w, "state:  %s\n", describeSync(rep.State))
	return nil
}

func shortHead(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// printDistributed adds the lock backend's holder and the remote's state to
// `dream status`.
func printDistributed(w io.Writer, s dream.StatusReport) {
	b := s.LockBackend
	if b.Backend != "" && b.Backend != "file" {
		fmt.Fprintf(w, "backend:      %s (%s)\n", b.Backend, b.Where)
		if b.Unreachable {
			fmt.Fprintf(w, "holder:       UNKNOWN: %s unreachable (%s); no dream starts here until it answers\n", b.Backend, b.Reason)
		} else if b.Held {
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
		fmt.Fprintf(w, "remote:       %s: %s\n", s.Sync.Remote, describeSync(*s.Sync))
	}
}

// describeSync says how the histories stand and what the next sync will
// do, as git worked it out (SyncState.Next).
func describeSync(s dream.SyncState) string {
	switch s.State {
	case "unreachable", "unknown":
		return s.State + ": " + s.Error + "; dreams go on with this machine's memory, and the next sync that reaches the remote pushes them"
	case "rewritten":
		return "the remote's history was rewritten: the next sync refuses to merge or push; `dream sync --adopt-remote` takes the remote's history (keeping this machine's in a backup ref)"
	}
	where := map[string]string{
		"in sync":       "in sync",
		"ahead":         fmt.Sprintf("ahead by %d commit(s)", s.Ahead),
		"behind":        fmt.Sprintf("behind by %d commit(s)", s.Behind),
		"diverged":      fmt.Sprintf("diverged (%d commit(s) here, %d there)", s.Ahead, s.Behind),
		"nothing local": fmt.Sprintf("nothing here yet, %d commit(s) there", s.Behind),
		"remote empty":  fmt.Sprintf("the remote is empty, %d commit(s) here", s.Ahead),
	}[s.State]
	if where == "" {
		where = s.State
	}
	if n := len(s.HandEdits); n > 0 {
		where += fmt.Sprintf(", counting %d file(s) edited by hand that it records first", n)
	}
	switch s.Next {
	case "nothing":
		return where
	case "push":
		return where + ": the next dream or `dream sync` pushes them"
	case "fast-forward":
		return where + ": the next dream or `dream sync` fast-forwards to them"
	case "merge":
		return where + ": the next dream or `dream sync` merges them cleanly and pushes the merge"
	case "conflict":
		return fmt.Sprintf("%s: the next sync stops on a conflict in %s (changed on the same lines on both sides); dreams wait until it is resolved: run `dream sync` to see how", where, strings.Join(s.Conflicts, ", "))
	}
	if s.Error != "" {
		return where + ": " + s.Error
	}
	return where
}
