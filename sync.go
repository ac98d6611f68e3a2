package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/settings"
)

// syncTimeout bounds the fetch `dream status` does to compare with the
// remote: status must answer even when the remote is down or this machine
// is cut off from it (then the counts are as of the last fetch).
const syncTimeout = 5 * time.Second

// openLock builds the consolidation lock: the file lock, always, wrapped
// by Config.OpenLock when the settings ask for another backend (lock =
// etcd), which the root does not link.
//
// The memory dream's lock is the memory dir's .consolidate-lock, which
// Claude Code and codebot share. A job's is its own, one per job and write
// dir in the job's part of the state dir (<StateDir>/lock/<memKey>/),
// with the same three meanings: its mtime is the job's last run, its body
// the holder's PID, and a dead or stale holder may be reclaimed.
func openLock(cfg Config, memKey string) (Lock, error) {
	dir := cfg.MemoryDir
	if !cfg.Job.IsMemory() {
		dir = jobs.LockDir(cfg.StateDir, memKey)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	file := FileLock(dir, filepath.Join(cfg.StateDir, "locks", memKey+".flock"))
	switch {
	case cfg.Settings.Lock == "" || cfg.Settings.Lock == settings.LockFile:
		return file, nil
	case cfg.OpenLock == nil:
		return nil, fmt.Errorf("lock backend %q is not linked into this program (Config.OpenLock is nil; the dream command wires it)", cfg.Settings.Lock)
	default:
		return cfg.OpenLock(cfg, file)
	}
}

// Syncer carries the memory's audit history to and from its branch on
// sync_remote, under the consolidation lock: a dream pulls before and
// pushes after, `dream sync` does both by hand, `dream status` compares.
// The library does not link it: the dream command fills Config.OpenSync
// with the git backend. A remote that cannot be reached is an error that
// matches errors.Is(err, ErrUnreachable).
type Syncer interface {
	// Remote is the URL as configured.
	Remote() string
	// Pull merges the remote's history; resolved accepts a hand resolution
	// of the conflict the last pull reported (SyncOptions.Resolved).
	Pull(ctx context.Context, resolved bool) (SyncPull, error)
	// AdoptRemote takes the remote's rewritten history (SyncOptions.AdoptRemote).
	AdoptRemote(ctx context.Context) (SyncPull, error)
	// Push sends the local history and returns how many commits it sent.
	Push(ctx context.Context) (int, error)
	// Status compares the local history with the remote's.
	Status(ctx context.Context) SyncState
}

// syncRepo is the memory's branch on its remote, nil when sync_remote is
// not set.
func (d *Dreamer) syncRepo(ctx context.Context) (Syncer, error) {
	if d.cfg.Settings.SyncRemote == "" {
		return nil, nil
	}
	r, err := d.cfg.OpenSync(ctx, d.cfg, func(ctx context.Context) error { return d.fenceLanding(ctx, false) })
	if err != nil {
		return nil, fmt.Errorf("dream: sync: %w", err)
	}
	return r, nil
}

// syncPull merges the remote's memory before a dream, under the lock. Hand
// edits are recorded first so that a merge can never lose them. A conflict,
// a rewritten remote or an unsafe entry stops the dream with nothing
// changed, its error saying what blocks and how to clear it: dreaming on
// them would only deepen what the user must resolve. A remote that cannot be
// reached does not: the dream goes on with this machine's memory, says so
// in its report, and the next dream or `dream sync` pushes it.
func (d *Dreamer) syncPull(ctx context.Context, hist *audit.History) (*DreamSync, error) {
	r, err := d.syncRepo(ctx)
	if r == nil || err != nil {
		return nil, err
	}
	if _, err := hist.RecordHandEdits(ctx); err != nil {
		return nil, fmt.Errorf("dream: recording hand edits before the pull: %w", err)
	}
	s := &DreamSync{}
	res, err := r.Pull(ctx, false)
	if errors.Is(err, ErrUnreachable) {
		s.Error = fmt.Sprintf("%v; the dream went on with this machine's memory, and the next dream or `dream sync` that reaches the remote pushes it", err)
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("dream: pulling the memory from %s: %w", r.Remote(), err)
	}
	s.Pulled = res.Commits
	if res.Commits > 0 {
		d.cfg.Logf("dream: pulled %d commit(s) from %s (%s, %d file(s))", res.Commits, r.Remote(), res.Kind, len(res.Files))
	}
	return s, nil
}

// syncPush sends the history to the remote after a dream landed, still
// under the lock, so that the next holder's pull sees it. A push that
// fails (or is not tried: the pull found the remote unreachable) is said in
// s.Error: the dream has landed here and the next dream or `dream sync`
// pushes it.
func (d *Dreamer) syncPush(ctx context.Context, s *DreamSync) {
	if s == nil || s.Error != "" {
		return
	}
	r, err := d.syncRepo(ctx)
	if err != nil {
		s.Error = err.Error()
		return
	}
	if s.Pushed, err = r.Push(ctx); err != nil {
		s.Error = fmt.Sprintf("the dream landed here but was not pushed: %v; the next dream or `dream sync` pushes it", err)
	}
}

// DreamSync is what a dream did with sync_remote (Report.Sync).
type DreamSync struct {
	// Pulled is how many remote commits were merged before the dream.
	Pulled int `json:"pulled"`
	// Pushed is how many commits reached the remote after it landed.
	Pushed int `json:"pushed"`
	// Error is what failed: the remote could not be reached (the dream
	// went on with this machine's memory) or the push failed. The dream
	// still landed here; the next dream or `dream sync` pushes it.
	Error string `json:"error,omitempty"`
}

// SyncOptions tune Sync.
type SyncOptions struct {
	// Wait is how long to wait for the consolidation lock while another
	// live holder has it (a dream, another machine's sync), as git waits
	// for its index lock; 0 gives up at once. Either way a lock still held
	// is a *LockHeldError.
	Wait time.Duration
	// Resolved accepts a hand resolution: each file the merge conflicts on
	// is taken as it is in the memory dir now, as long as the remote's
	// version is still the one the conflict error reported. The merge
	// commit has both histories as parents.
	Resolved bool
	// AdoptRemote answers a rewritten remote: this
	// machine's history is kept under a backup ref (SyncPull.Backup) and
	// the memory takes the remote's history as it is now.
	AdoptRemote bool
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
	// "nothing local", "rewritten", "unreachable" or "unknown".
	State  string `json:"state"`
	Ahead  int    `json:"ahead"`
	Behind int    `json:"behind"`
	Local  string `json:"local,omitempty"`
	Theirs string `json:"remote_head,omitempty"`
	// Next is what the next sync will do, as git works it out from the
	// recorded history and the remote as fetched: "nothing", "push",
	// "fast-forward", "merge" (clean), "conflict" (Conflicts) or "refused"
	// (the remote was rewritten); empty when the remote was not reached.
	Next      string   `json:"next,omitempty"`
	Conflicts []string `json:"conflicts,omitempty"`
	// HandEdits are files edited since the last record, which the next
	// sync records first; the counts and Next include them.
	HandEdits []string `json:"hand_edits,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// SyncPull says what a pull did.
type SyncPull struct {
	// Kind is "up to date", "fast-forward", "merge" or "adopted".
	Kind string `json:"kind"`
	// Commits is how many remote commits were brought in.
	Commits int `json:"commits"`
	// Files are the memory files the pull changed.
	Files []Change `json:"files"`
	// Resolved are the conflicted files taken as resolved by hand.
	Resolved []string `json:"resolved,omitempty"`
	// Backup, for an adoption, is the ref keeping this machine's history
	// from before; Unsynced are its commits that never reached the remote
	// ("<id> <subject>"), which only the backup holds now, and ShowBackup
	// the git command that shows them.
	Backup     string   `json:"backup,omitempty"`
	Unsynced   []string `json:"unsynced,omitempty"`
	ShowBackup string   `json:"show_backup,omitempty"`
	// Head is the new local head.
	Head string `json:"head,omitempty"`
}

// Sync pulls and pushes the memory's history by hand, under the lock
// (the zero SyncOptions: without waiting for it, resolving nothing). It
// does not move the time gate.
func (d *Dreamer) Sync(ctx context.Context, o SyncOptions) (SyncReport, error) {
	rep := SyncReport{Remote: d.cfg.Settings.SyncRemote}
	if rep.Remote == "" {
		return rep, ErrNoRemote
	}
	if o.Resolved && o.AdoptRemote {
		return rep, errors.New("dream: resolving a conflict and adopting the remote's history exclude each other")
	}
	err := d.locked(ctx, stepOptions{claim: true, wait: o.Wait}, func(*held, journal.Recovery) (bool, error) {
		hist, err := audit.Open(ctx, d.cfg.StateDir, d.cfg.MemoryDir)
		if err != nil {
			return false, fmt.Errorf("dream: opening the audit history: %w", err)
		}
		r, err := d.syncRepo(ctx)
		if err != nil {
			return false, err
		}
		if _, err := hist.RecordHandEdits(ctx); err != nil {
			return false, fmt.Errorf("dream: recording hand edits: %w", err)
		}
		if o.AdoptRemote {
			rep.Pulled, err = r.AdoptRemote(ctx)
			if err != nil {
				return false, fmt.Errorf("dream: adopting the history of %s: %w", r.Remote(), err)
			}
		} else {
			rep.Pulled, err = r.Pull(ctx, o.Resolved)
			if err != nil {
				return false, fmt.Errorf("dream: pulling from %s: %w", r.Remote(), err)
			}
		}
		if rep.Pushed, err = r.Push(ctx); err != nil {
			return false, fmt.Errorf("dream: pushing to %s: %w", r.Remote(), err)
		}
		rep.State = r.Status(ctx)
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
	r, err := d.syncRepo(ctx)
	if err != nil {
		return &SyncState{Remote: d.cfg.Settings.SyncRemote, State: "unknown", Error: err.Error()}
	}
	st := r.Status(ctx)
	return &st
}

// syncBranch is this memory's branch on the remote and the identity its etcd
// keys are derived from: sync_branch when set, else "dream/" + host.SyncIdentity.
func syncBranch(cfg Config) string {
	if b := cfg.Settings.SyncBranch; b != "" {
		return b
	}
	home, _ := os.UserHomeDir()
	return "dream/" + host.SyncIdentity(cfg.MemoryDir, home)
}
