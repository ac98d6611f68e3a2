package gitsync

import (
	"context"
	"fmt"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/audit"
)

// A Repo is the library's Syncer: its results are the contract's own types,
// so there is nothing to convert between them.
var _ dream.Syncer = (*Repo)(nil)

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
	return r, nil
}
