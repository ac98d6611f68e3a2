package gitsync

import (
	"context"
	"fmt"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
)

// Open is dream.Config.OpenSync, which the dream command sets: the
// memory's audit history on its branch (Settings.SyncBranch) of
// Settings.SyncRemote. fence is called right before a pull lands files.
func Open(ctx context.Context, cfg dream.Config, fence func(context.Context) error) (dream.Syncer, error) {
	hist, err := audit.Open(ctx, cfg.StateDir, cfg.MemoryDir)
	if err != nil {
		return nil, fmt.Errorf("opening the audit history: %w", err)
	}
	r, err := New(hist, cfg.Settings.SyncRemote, cfg.Settings.SyncBranch, cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("sync_branch: %w", err)
	}
	r.SetFence(fence)
	return syncer{r}, nil
}

// syncer is a Repo as dream.Syncer: its results in the library's types.
type syncer struct{ *Repo }

func (s syncer) Pull(ctx context.Context, resolved bool) (dream.SyncPull, error) {
	p, err := s.Repo.Pull(ctx, resolved)
	return pull(p), err
}

func pull(p PullResult) dream.SyncPull {
	out := dream.SyncPull{Kind: p.Kind, Commits: p.Commits, Head: p.Head, Resolved: p.Resolved}
	if p.Files != nil {
		out.Files = changes(p.Files)
	}
	return out
}

func (s syncer) AdoptRemote(ctx context.Context) (dream.SyncPull, error) {
	a, err := s.Repo.AdoptRemote(ctx)
	return dream.SyncPull{Kind: "adopted", Files: changes(a.Files), Head: a.Head, Backup: a.Backup, Unsynced: a.Unsynced, ShowBackup: a.Show}, err
}

func (s syncer) Status(ctx context.Context) dream.SyncState { return s.state(s.Repo.Status(ctx)) }

func (syncer) state(st State) dream.SyncState {
	return dream.SyncState{Remote: st.Remote, Branch: st.Branch, State: st.State, Ahead: st.Ahead, Behind: st.Behind, Local: st.Local, Theirs: st.Theirs,
		Next: st.Next, Conflicts: st.Conflicts, HandEdits: st.HandEdits, Error: st.Error}
}

// changes is never nil, so JSON shows [].
func changes(cs []journal.Change) []dream.Change {
	out := make([]dream.Change, 0, len(cs))
	for _, c := range cs {
		out = append(out, dream.Change{Path: c.Path, Kind: c.Kind, Added: c.Added, Removed: c.Removed})
	}
	return out
}
