package gitsync

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dreamkit/dream"
)

// rewrittenError says that the remote no longer holds what this machine
// last synced with, what was not done because of it, and how to adopt the
// remote's history, naming the commits made here that only a backup would
// keep.
func (r *Repo) rewrittenError(ctx context.Context, st dream.SyncState) error {
	synced, err := r.rev(ctx, r.syncedRef())
	if err != nil {
		return fmt.Errorf("gitsync: %w: %w", ErrRewritten, err)
	}
	what := fmt.Sprintf("branch %s no longer contains commit %s, which this machine last synced with: it was force-pushed (to purge a file, say)", r.branch, shortID(synced))
	adopt := "To take the remote's history as it is now, run `dream sync --adopt-remote`: this machine's history is kept in a backup ref first"
	if st.Theirs == "" {
		what = fmt.Sprintf("branch %s is gone from the remote (this machine last synced with its commit %s)", r.branch, shortID(synced))
		adopt = "To start the branch again from this machine's memory, run `dream sync --adopt-remote`"
	}
	note := ""
	if mine, err := r.unsynced(ctx, st.Local, synced, st.Theirs); err == nil && len(mine) > 0 {
		note = fmt.Sprintf("; %d commit(s) made here never reached the remote (%s): the backup keeps them", len(mine), brief(mine, 5))
	}
	return fmt.Errorf("%w: %s; nothing was merged or pushed. %s%s", ErrRewritten, what, adopt, note)
}

// unsynced lists this machine's commits that were never on the remote:
// in local, neither in what it last synced with nor in the remote now;
// "<short id> <subject>", newest first.
func (r *Repo) unsynced(ctx context.Context, local, synced, theirs string) ([]string, error) {
	if local == "" {
		return nil, nil
	}
	args := []string{"log", "--format=%h %s", local}
	if synced != "" || theirs != "" {
		args = append(args, "--not")
	}
	for _, c := range []string{synced, theirs} {
		if c != "" {
			args = append(args, c)
		}
	}
	out, err := r.git(ctx, args...)
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

func brief(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(list[:n], "; "), len(list)-n)
}

// AdoptRemote makes this machine's history the remote's, as it is now: the
// answer to ErrRewritten, when an admin rewrote the remote on purpose. The
// local history is first kept under a backup ref, which the result names
// (Backup, and ShowBackup the git command that shows what it holds beyond
// the remote's history), with the commits made here that never reached the
// remote (Unsynced, "<short id> <subject>", newest first); the memory dir
// then takes the remote's files through the journal. A remote whose branch
// is gone keeps the memory as it is and forgets the last sync, so the next
// push starts the branch again. The caller holds the consolidation lock and
// has recorded hand edits.
func (r *Repo) AdoptRemote(ctx context.Context) (dream.SyncPull, error) {
	res := dream.SyncPull{Kind: "adopted", Files: []dream.Change{}}
	if err := r.Fetch(ctx); err != nil {
		return res, err
	}
	var refs [3]string
	for i, name := range []string{"HEAD", r.fetchedRef(), r.syncedRef()} {
		c, err := r.rev(ctx, name)
		if err != nil {
			return res, fmt.Errorf("gitsync: %w", err)
		}
		refs[i] = c
	}
	local, theirs, synced := refs[0], refs[1], refs[2]
	res.Head = local
	if local != "" {
		var err error
		if res.Unsynced, err = r.unsynced(ctx, local, synced, theirs); err != nil {
			return res, fmt.Errorf("gitsync: listing this machine's unsynced commits: %w", err)
		}
		res.Backup = BackupPrefix + time.Now().UTC().Format("20060102T150405.000Z")
		if _, err := r.git(ctx, "update-ref", res.Backup, local, ""); err != nil {
			return res, fmt.Errorf("gitsync: keeping this machine's history in %s: %w", res.Backup, err)
		}
		res.ShowBackup = fmt.Sprintf("git --git-dir=%s log -p %s", r.hist.GitDir(), res.Backup)
		if theirs != "" {
			res.ShowBackup += " --not " + theirs
		}
	}
	if theirs == "" {
		return res, r.setRef(ctx, r.syncedRef(), "")
	}
	if theirs != local {
		oldTree := emptyTree
		if local != "" {
			oldTree = local + "^{tree}"
		}
		files, err := r.apply(ctx, oldTree, theirs+"^{tree}")
		if files != nil { // an adoption's Files are never nil, even when nothing landed
			res.Files = files
		}
		if err != nil {
			return res, err
		}
		if err := r.moveHead(ctx, local, theirs, "dream sync: adopt the remote's history"); err != nil {
			return res, err
		}
		res.Head = theirs
	}
	return res, r.synced(ctx, theirs)
}
