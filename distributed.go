package dream

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/etcdlock"
	"github.com/dreamkit/dream/internal/gitsync"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/internal/lockbackend"
	"github.com/dreamkit/dream/internal/settings"
)

// syncTimeout bounds the fetch `dream status` does to compare with the
// remote: status must answer even when the remote is down.
const syncTimeout = 15 * time.Second

// openLock builds the backend the settings ask for. The file lock is always
// there: with etcd it is taken too, for agents that know only the file.
func openLock(cfg Config, memKey string) (lockbackend.Backend, error) {
	file := lockbackend.NewFile(lock.New(cfg.MemoryDir, filepath.Join(cfg.StateDir, "locks", memKey+".flock")))
	switch cfg.Settings.Lock {
	case "", settings.LockFile:
		return file, nil
	case settings.LockEtcd:
		ec, err := etcdlock.FromSettings(cfg.Settings.Distributed, syncBranch(cfg))
		if err != nil {
			return nil, err
		}
		return etcdlock.New(ec, file)
	default:
		return nil, fmt.Errorf("unknown lock backend %q (want file or etcd)", cfg.Settings.Lock)
	}
}

// syncRepo is the memory's branch on its remote, nil when sync_remote is
// not set.
func (d *Dreamer) syncRepo(hist *audit.History) (*gitsync.Repo, error) {
	if d.cfg.Settings.SyncRemote == "" {
		return nil, nil
	}
	r, err := gitsync.New(hist, d.cfg.Settings.SyncRemote, syncBranch(d.cfg), d.cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("dream: sync_branch: %w", err)
	}
	r.SetFence(func(ctx context.Context) error { return d.fenceLanding(ctx, false) })
	return r, nil
}

// syncPull merges the remote's memory before a dream, under the lock. Hand
// edits are recorded first so that a merge can never lose them. An error
// (a conflict, an unreachable remote) stops the dream with nothing changed:
// dreaming on a stale memory would only make the next merge conflict.
func (d *Dreamer) syncPull(ctx context.Context, hist *audit.History) error {
	r, err := d.syncRepo(hist)
	if r == nil || err != nil {
		return err
	}
	if _, err := hist.RecordHandEdits(ctx); err != nil {
		return fmt.Errorf("dream: recording hand edits before the pull: %w", err)
	}
	res, err := r.Pull(ctx)
	if err != nil {
		return fmt.Errorf("dream: pulling the memory from %s: %w", r.Remote(), err)
	}
	if res.Commits > 0 {
		d.cfg.Logf("dream: pulled %d commit(s) from %s (%s, %d file(s))", res.Commits, r.Remote(), res.Kind, len(res.Files))
	}
	return nil
}

// syncPush sends the history to the remote after a dream landed, still
// under the lock, so that the next holder's pull sees it. It returns a
// message for the report when the push failed: the dream has landed here
// and is pushed by the next dream or `dream sync`.
func (d *Dreamer) syncPush(ctx context.Context, hist *audit.History) string {
	r, err := d.syncRepo(hist)
	if err != nil {
		return err.Error()
	}
	if r == nil {
		return ""
	}
	if _, err := r.Push(ctx); err != nil {
		d.cfg.Logf("dream: %v", err)
		return err.Error()
	}
	return ""
}

// SyncReport is what `dream sync` did.
type SyncReport struct {
	Remote string    `json:"remote"`
	Pulled SyncPull  `json:"pulled"`
	Pushed int       `json:"pushed"`
	State  SyncState `json:"state"`
}

// SyncState compares the memory's history with its branch on sync_remote.
type SyncState struct {
	Remote string `json:"remote"`
	// Branch is this memory's branch on the remote.
	Branch string `json:"branch,omitempty"`
	// State is "in sync", "ahead", "behind", "diverged", "remote empty",
	// "nothing local", "unreachable" or "unknown".
	State  string `json:"state"`
	Ahead  int    `json:"ahead"`
	Behind int    `json:"behind"`
	Local  string `json:"local,omitempty"`
	Theirs string `json:"remote_head,omitempty"`
	Error  string `json:"error,omitempty"`
}

// SyncPull says what a pull did.
type SyncPull struct {
	// Kind is "up to date", "fast-forward" or "merge".
	Kind string `json:"kind"`
	// Commits is how many remote commits were brought in.
	Commits int `json:"commits"`
	// Files are the memory files the pull changed.
	Files []Change `json:"files"`
	// Head is the new local head.
	Head string `json:"head,omitempty"`
}

// syncStateOf converts gitsync's comparison at the API's boundary.
func syncStateOf(s gitsync.State) SyncState {
	return SyncState{Remote: s.Remote, Branch: s.Branch, State: s.State, Ahead: s.Ahead, Behind: s.Behind, Local: s.Local, Theirs: s.Theirs, Error: s.Error}
}

// syncPullOf converts gitsync's pull result at the API's boundary.
func syncPullOf(p gitsync.PullResult) SyncPull {
	out := SyncPull{Kind: p.Kind, Commits: p.Commits, Head: p.Head}
	if p.Files != nil {
		out.Files = changesOf(p.Files)
	}
	return out
}

// ErrNoRemote: `dream sync` without sync_remote.
var ErrNoRemote = fmt.Errorf("dream: no sync_remote configured")

// Sync pulls and pushes the memory's history by hand, under the lock. It
// does not move the time gate.
func (d *Dreamer) Sync(ctx context.Context) (SyncReport, error) {
	rep := SyncReport{Remote: d.cfg.Settings.SyncRemote}
	if rep.Remote == "" {
		return rep, ErrNoRemote
	}
	err := d.withLock(ctx, func() (bool, error) {
		hist, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
		if err != nil {
			return false, fmt.Errorf("dream: opening the audit history: %w", err)
		}
		r, err := d.syncRepo(hist)
		if err != nil {
			return false, err
		}
		if _, err := hist.RecordHandEdits(ctx); err != nil {
			return false, fmt.Errorf("dream: recording hand edits: %w", err)
		}
		pulled, err := r.Pull(ctx)
		rep.Pulled = syncPullOf(pulled)
		if err != nil {
			return false, fmt.Errorf("dream: pulling from %s: %w", r.Remote(), err)
		}
		if rep.Pushed, err = r.Push(ctx); err != nil {
			return false, fmt.Errorf("dream: pushing to %s: %w", r.Remote(), err)
		}
		rep.State = syncStateOf(r.Status(ctx))
		return false, nil
	})
	return rep, err
}

// syncStatus compares with the remote for `dream status`; nil without one.
func (d *Dreamer) syncStatus(ctx context.Context) *SyncState {
	if d.cfg.Settings.SyncRemote == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	hist, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
	if err != nil {
		return &SyncState{Remote: d.cfg.Settings.SyncRemote, State: "unknown", Error: err.Error()}
	}
	r, err := d.syncRepo(hist)
	if err != nil {
		return &SyncState{Remote: d.cfg.Settings.SyncRemote, State: "unknown", Error: err.Error()}
	}
	st := syncStateOf(r.Status(ctx))
	return &st
}
