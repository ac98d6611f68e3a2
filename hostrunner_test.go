package dream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/settings"
)

// hostMemory is a small memory with headings, a numbered procedure, a
// quote and Chinese, as a real one has.
func hostMemory() map[string]string {
	return map[string]string{
		"MEMORY.md":         "# Memory\n\n- [Build](build.md) — how it builds\n- [People](people.md) — who is who\n- [Deploy](deploy.md) — shipping\n",
		"build.md":          "# Build\n\n- make all\n\n## Tests\n\n- go test ./...\n",
		"people.md":         "# People\n\n- 王芳 owns billing\n\n> ask before paging her\n",
		"deploy.md":         "# Deploy\n\n1. Tag the release.\n2. Push the tag.\n",
		"unused.md":         "# Unused\n",
		"topics/storage.md": "# Storage\n\n## Backups\n\n- nightly at 02:00\n",
	}
}

// newHostDreamer writes the memory and returns a Dreamer over it with run
// as a host's own Runner (a RunnerFunc: it may write files in place, so it
// gets a copy of the memory); mutate may adjust the config.
func newHostDreamer(t *testing.T, run RunnerFunc, mutate func(*Config)) (d *Dreamer, mem, state string) {
	t.Helper()
	root := t.TempDir()
	mem, state = filepath.Join(root, "memory"), filepath.Join(root, "state")
	for p, b := range hostMemory() {
		replaceFile(t, filepath.Join(mem, p), b)
	}
	s := settings.DreamDefaults()
	cfg := Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: run}
	if mutate != nil {
		mutate(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, mem, state
}

func readMem(t *testing.T, mem, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mem, filepath.FromSlash(rel)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

func wantMemory(t *testing.T, mem string, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if got := readMem(t, mem, p); got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
}

// A host's dream as a dry run reports its diff and changes nothing; as a
// review run it is staged, shown, applied (then undone), or discarded.
func TestHostDreamDryRunReviewApplyDiscard(t *testing.T) {
	newBuild := "# Build\n\n- make all\n- make lint\n\n## Tests\n\n- go test ./...\n"
	run := func(ctx context.Context, job Job) (Outcome, error) {
		replaceFile(t, filepath.Join(job.MemoryDir, "build.md"), newBuild)
		replaceFile(t, filepath.Join(job.MemoryDir, "topics/new.md"), "# New\n\n- 新的事实\n")
		return Outcome{}, nil
	}
	d, mem, state := newHostDreamer(t, run, nil)
	ctx := context.Background()
	rep, err := d.Run(ctx, RunOptions{DryRun: true})
	if err != nil || rep.Status != StatusDryRun || !strings.Contains(rep.Diff, "+- make lint\n") || !strings.Contains(rep.Diff, "+- 新的事实\n") {
		t.Fatalf("dry run = %s, %v:\n%s", rep.Status, err, rep.Diff)
	}
	wantMemory(t, mem, map[string]string{"build.md": hostMemory()["build.md"], "topics/new.md": ""})
	if journal.HasPending(state, mem) {
		t.Fatal("a dry run left a transaction")
	}

	rep, err = d.Run(ctx, RunOptions{Review: true})
	if err != nil || rep.Status != StatusStaged {
		t.Fatalf("review run = %s, %v", rep.Status, err)
	}
	staged, err := d.Staged()
	if err != nil || len(staged) != 1 || staged[0].ID != rep.TaskID {
		t.Fatalf("staged = %+v, %v", staged, err)
	}
	dd, err := d.Diff(ctx, rep.TaskID)
	if err != nil || dd.Source != DiffStaged || len(dd.Changes) != 2 || !strings.Contains(dd.Diff, "+- make lint\n") {
		t.Fatalf("diff = %+v, %v", dd, err)
	}
	wantMemory(t, mem, map[string]string{"build.md": hostMemory()["build.md"]})
	changes, _, err := d.Apply(ctx, rep.TaskID)
	if err != nil || len(changes) != 2 {
		t.Fatalf("apply = %+v, %v", changes, err)
	}
	wantMemory(t, mem, map[string]string{"build.md": newBuild, "topics/new.md": "# New\n\n- 新的事实\n"})
	if _, err := d.Undo(ctx, rep.TaskID, false); err != nil {
		t.Fatal(err)
	}
	wantMemory(t, mem, map[string]string{"build.md": hostMemory()["build.md"], "topics/new.md": ""})

	rep, err = d.Run(ctx, RunOptions{Review: true})
	if err != nil || rep.Status != StatusStaged {
		t.Fatalf("second review run = %s, %v", rep.Status, err)
	}
	if err := d.Discard(rep.TaskID); err != nil {
		t.Fatal(err)
	}
	if staged, _ := d.Staged(); len(staged) != 0 {
		t.Fatalf("staged after discard = %+v", staged)
	}
	wantMemory(t, mem, map[string]string{"build.md": hostMemory()["build.md"], "topics/new.md": ""})
}

// The guards judge a host's dream against the memory it started from: a
// file left half-written is held by the loss guard, a runner that fails
// after half a write lands nothing, a file the host cannot load is kept as
// it was while the rest lands, and a pinned fact is found in the files the
// dream did not write, or missed when the dream dropped it.
func TestHostDreamGuards(t *testing.T) {
	half := hostMemory()["build.md"][:len(hostMemory()["build.md"])/2]
	ctx := context.Background()
	t.Run("half written", func(t *testing.T) {
		// Every topic cut in half, as a runner killed mid-write leaves it.
		d, mem, _ := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
			for p, b := range hostMemory() {
				if p != "MEMORY.md" {
					replaceFile(t, filepath.Join(job.MemoryDir, p), b[:len(b)/2])
				}
			}
			return Outcome{}, nil
		}, nil)
		rep, err := d.Run(ctx, RunOptions{})
		if err != nil || rep.Status != StatusStaged || !strings.HasPrefix(rep.ParkReason, ParkLossGuard) {
			t.Fatalf("dream = %s (%q), %v", rep.Status, rep.ParkReason, err)
		}
		wantMemory(t, mem, hostMemory())
	})
	t.Run("failed mid-write", func(t *testing.T) {
		d, mem, state := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
			f, err := os.Create(filepath.Join(job.MemoryDir, "build.md"))
			if err != nil {
				return Outcome{}, err
			}
			f.WriteString(half)
			f.Close()
			return Outcome{}, errors.New("disk went away")
		}, nil)
		rep, err := d.Run(ctx, RunOptions{})
		if err == nil || rep.Status != StatusFailed {
			t.Fatalf("dream = %s, %v", rep.Status, err)
		}
		wantMemory(t, mem, map[string]string{"build.md": hostMemory()["build.md"]})
		if journal.HasPending(state, mem) {
			t.Fatal("a failed dream left its transaction")
		}
	})
	t.Run("edit guard", func(t *testing.T) {
		d, mem, _ := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
			replaceFile(t, filepath.Join(job.MemoryDir, "build.md"), "# Build\n\n- make all\n- make lint\n\n## Tests\n\n- go test ./...\n")
			replaceFile(t, filepath.Join(job.MemoryDir, "people.md"), "# People\n\n- 王芳 owns billing and payroll\n\n> ask before paging her\n")
			return Outcome{}, nil
		}, func(c *Config) {
			c.CheckEdit = func(rel string, before, after []byte) error {
				if rel == "people.md" {
					if string(before) != hostMemory()["people.md"] {
						t.Errorf("the edit guard's before of people.md = %q", before)
					}
					return errors.New("people.md: the host cannot load it")
				}
				return nil
			}
		})
		rep, err := d.Run(ctx, RunOptions{})
		if err != nil || rep.Status != StatusCompleted || !slices.Equal(rep.FilesTouched, []string{"build.md"}) {
			t.Fatalf("dream = %s %v, %v", rep.Status, rep.FilesTouched, err)
		}
		wantMemory(t, mem, map[string]string{"people.md": hostMemory()["people.md"], "build.md": "# Build\n\n- make all\n- make lint\n\n## Tests\n\n- go test ./...\n"})
	})
	t.Run("marker pin dropped", func(t *testing.T) {
		d, mem, _ := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
			if !slices.Contains(job.Pinned, "Tag the release.") {
				t.Errorf("the job's pinned facts = %q, want the marker-pinned one", job.Pinned)
			}
			replaceFile(t, filepath.Join(job.MemoryDir, "deploy.md"), "# Deploy\n\n2. Push the tag.\n")
			return Outcome{}, nil
		}, nil)
		replaceFile(t, filepath.Join(mem, "deploy.md"), "# Deploy\n\n1. Tag the release. <!-- pin -->\n2. Push the tag.\n")
		rep, err := d.Run(ctx, RunOptions{})
		if err == nil || !strings.Contains(rep.Error, "Tag the release.") {
			t.Fatalf("a dropped marker-pinned fact: %s, %v", rep.Status, err)
		}
		wantMemory(t, mem, map[string]string{"deploy.md": "# Deploy\n\n1. Tag the release. <!-- pin -->\n2. Push the tag.\n"})
	})
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "pinned kept", true: "pinned dropped"}[drop], func(t *testing.T) {
			d, mem, _ := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
				replaceFile(t, filepath.Join(job.MemoryDir, "build.md"), "# Build\n\n- make all\n- make lint\n\n## Tests\n\n- go test ./...\n")
				if drop {
					replaceFile(t, filepath.Join(job.MemoryDir, "people.md"), "# People\n\n> ask before paging her\n")
				}
				return Outcome{}, nil
			}, func(c *Config) { c.Settings.Pinned = []string{"王芳 owns billing", "nightly at 02:00"} })
			rep, err := d.Run(ctx, RunOptions{})
			if drop {
				if err == nil || !strings.Contains(rep.Error, "pinned") {
					t.Fatalf("a dropped pinned fact: %s, %v", rep.Status, err)
				}
				wantMemory(t, mem, map[string]string{"people.md": hostMemory()["people.md"], "build.md": hostMemory()["build.md"]})
				return
			}
			if err != nil || rep.Status != StatusCompleted {
				t.Fatalf("dream = %s, %v (%s)", rep.Status, err, rep.Error)
			}
		})
	}
}

// Hostile host runners: a staged symlink to a file outside, a write that
// climbs out of staging with "..", dream's own lock file written in
// staging, and a write straight into the user's memory dir. None of them
// lands as the dream's: only the dream's real change is committed and
// audited, the outside file is never read into memory, the lock is
// untouched, and the write into the memory dir is never recorded under the
// dream (it is the memory's own state, kept, as a hand edit is).
func TestHostDreamHostileRunner(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("# Secret\n\n- sk-not-for-memory\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, mem, _ := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
		if err := os.Symlink(secret, filepath.Join(job.MemoryDir, "leak.md")); err != nil {
			return Outcome{}, err
		}
		if err := os.WriteFile(filepath.Join(job.MemoryDir, "..", "escape.md"), []byte("# Escape\n"), 0o644); err != nil {
			return Outcome{}, err
		}
		if err := os.WriteFile(filepath.Join(job.MemoryDir, journal.LockName), []byte("999"), 0o644); err != nil {
			return Outcome{}, err
		}
		replaceFile(t, filepath.Join(job.MemoryDisplayDir, "rogue.md"), "# Rogue\n")
		replaceFile(t, filepath.Join(job.MemoryDir, "build.md"), "# Build\n\n- make all\n- make lint\n\n## Tests\n\n- go test ./...\n")
		return Outcome{}, nil
	}, nil)
	rep, err := d.Run(context.Background(), RunOptions{})
	if err != nil || rep.Status != StatusCompleted {
		t.Fatalf("dream = %s, %v (%s)", rep.Status, err, rep.Error)
	}
	if !slices.Equal(rep.FilesTouched, []string{"build.md"}) {
		t.Fatalf("files touched = %v", rep.FilesTouched)
	}
	for _, p := range []string{"leak.md", "escape.md"} {
		if _, err := os.Lstat(filepath.Join(mem, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s reached the memory dir (%v)", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(mem, journal.LockName)); string(b) == "999" {
		t.Error("the staged lock file reached the memory dir")
	}
	log, err := d.Log(context.Background(), 0)
	if err != nil || len(log) == 0 || log[0].ID != rep.TaskID {
		t.Fatalf("log = %+v, %v", log, err)
	}
	for _, f := range log[0].Files {
		if f.Path != "build.md" {
			t.Errorf("the dream's history entry records %s", f.Path)
		}
	}
}
