package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/dreamid"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/task"

	"github.com/dreamkit/dream"
)

// An id is enough: `dream show|undo|diff|apply|discard ID` find the memory
// dir the dream worked on from the state dir (dreamid.MemoryDir: the task
// registry, the event log, the audit histories), so that the line a run
// printed works from any directory, for any memory, without repeating
// where the memory was. A memory dir or host given on the command line
// still decides, which is how a user picks between memory dirs sharing an
// id prefix; one from the config file or the environment does not, since
// it says nothing about which memory this id is from.

// explicitMemory reports whether this invocation named its memory dir (or
// the host that locates it) with a flag.
func (a *app) explicitMemory() bool {
	return strings.HasPrefix(a.loaded.Source["memory_dir"], "flag") || strings.HasPrefix(a.loaded.Source["host"], "flag")
}

// memoryDreamerFor builds the model-free Dreamer for a command about dream
// id: on the memory dir the flags name, or else the one the id belongs to.
func (a *app) memoryDreamerFor(id string) (*dream.Dreamer, error) {
	state := a.loaded.Settings.StateDir
	if a.job == "" {
		a.job = a.jobOfDream(id)
	}
	mem, err := dreamid.MemoryDir(a.ctx, state, id)
	if a.isJob() && err == nil {
		return a.jobDreamerAt(mem)
	}
	if a.explicitMemory() {
		// The flag decides; but an id that belongs to another memory dir
		// alone would only meet "no such entry" there: say where it is.
		if err == nil {
			if named, _, _, lerr := a.locations(); lerr == nil && !sameDir(named, mem) {
				return nil, fmt.Errorf("dream %s worked on %s, not on %s: leave out --memory-dir (an id is enough) or pass --memory-dir %s",
					id, mem, named, shellQuote(mem))
			}
		}
		return a.memoryDreamer()
	}
	var amb *dreamid.AmbiguousError
	switch {
	case err == nil:
		s := a.loaded.Settings
		// The id's memory, not the configured one. Its host, if any, was
		// the dream's business (showing and undoing need none), except
		// nanobot's: a workspace is applied and undone as one, so that its
		// guard, audit scope and git-store commit still apply.
		s.MemoryDir, s.Host = mem, ""
		if nanobot.IsWorkspace(mem) {
			s.Host = nanobot.HostName
		}
		a.loaded.Settings = s
		a.layout = nil
		return a.memoryDreamer()
	case errors.As(err, &amb):
		return nil, usagef("%q matches dreams of %d memory dirs (%s): pass the full id, or --memory-dir DIR to choose",
			id, len(amb.MemoryDirs), strings.Join(amb.MemoryDirs, ", "))
	case errors.Is(err, task.ErrAmbiguous):
		return nil, usagef("%v: pass more of the id (dream tasks lists them)", err)
	case errors.Is(err, dreamid.ErrUnknown):
		return nil, &unknownDreamError{id: id, stateDir: state}
	}
	return nil, fmt.Errorf("finding the memory dir of dream %s: %w", id, err)
}

// unknownDreamError says that no record names the id, and how to list the
// ids that exist. It matches dreamid.ErrUnknown.
type unknownDreamError struct{ id, stateDir string }

func (e *unknownDreamError) Error() string {
	return fmt.Sprintf("no dream %q is recorded in the state dir %s; list the ids with dream log (one memory's history: add --memory-dir DIR or --host NAME) or dream tasks (recent dreams); a dream run with --state-dir is found with the same --state-dir", e.id, e.stateDir)
}

func (e *unknownDreamError) Unwrap() error { return dreamid.ErrUnknown }

// sameDir reports whether two paths name one directory, however spelled
// (relative, with a symlink).
func sameDir(x, y string) bool {
	canon := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Clean(p)
	}
	return canon(x) == canon(y)
}

// idError explains an id the memory's own records do not know (no history
// entry, nothing staged) by naming the commands that list the ids there
// are; any other error, an already-applied review included, passes as it is.
func (a *app) idError(id string, err error) error {
	var applied *dream.AlreadyAppliedError
	if err == nil || errors.As(err, &applied) || !errors.Is(err, dream.ErrNoSuchEntry) && !errors.Is(err, dream.ErrNotStaged) {
		return err
	}
	mem, _, _, lerr := a.locations()
	if lerr != nil {
		return err
	}
	what := "no dream"
	if errors.Is(err, dream.ErrNotStaged) {
		what = "no staged dream"
	}
	return fmt.Errorf("%s %q in %s: list its dreams with %s, the staged ones with %s, recent dreams of every memory with %s",
		what, id, mem, a.hint("log", "--memory-dir", mem), a.hint("diff", "--memory-dir", mem), a.hint("tasks"))
}
