// Package dreamid finds which memory a dream id belongs to, from the state
// dir alone, so that a caller holding only an id (`dream show ID`, an MCP
// client) can open the right Dreamer.
package dreamid

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/internal/telemetry"
)

// ErrUnknown: neither the task registry, the event log nor the audit
// histories of the state dir know a dream by that id, so its memory dir is
// unknown.
var ErrUnknown = errors.New("dream: no dream with that id is known in this state dir")

// AmbiguousError: the id (a prefix) names dreams of several memory dirs;
// the caller must say which memory dir it means. It matches
// task.ErrAmbiguous.
type AmbiguousError struct {
	ID         string
	MemoryDirs []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("dream: %q matches dreams of %d memory dirs: %s", e.ID, len(e.MemoryDirs), strings.Join(e.MemoryDirs, ", "))
}

// Is makes errors.Is(err, task.ErrAmbiguous) hold.
func (e *AmbiguousError) Is(target error) bool { return target == task.ErrAmbiguous }

// MemoryDir returns the memory dir dream id (or a unique prefix of it)
// belongs to. Four records are asked, cheapest first, because each outlives
// something the previous one forgets: the task registry (every dream,
// staged and demo ones included, until pruned), the event log (every dream
// that started, never pruned), the staging of dreams parked for review
// (until applied or discarded), and the audit histories (every recorded
// change: undos and hand edits have no task, and a state dir copied without
// its log still has them).
func MemoryDir(ctx context.Context, stateDir, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("%w: empty id", ErrUnknown)
	}
	reg, err := task.Open(stateDir)
	if err != nil {
		return "", err
	}
	e, err := reg.Get(id)
	switch {
	case err == nil && e.MemoryDir != "":
		return e.MemoryDir, nil
	case errors.Is(err, task.ErrAmbiguous):
		// Several tasks: fine if they all worked on one memory dir, whose
		// own history then says which entries the prefix matches.
		entries, lerr := reg.List()
		if lerr != nil {
			return "", lerr
		}
		var dirs []string
		for _, t := range entries {
			if strings.HasPrefix(t.ID, id) && t.MemoryDir != "" {
				dirs = appendNew(dirs, filepath.Clean(t.MemoryDir))
			}
		}
		return oneMemoryDir(id, dirs, nil)
	}
	if dirs, err := inEvents(stateDir, id); err != nil || len(dirs) > 0 {
		return oneMemoryDir(id, dirs, err)
	}
	// The last two together: a prefix may match a staged dream of one
	// memory and recorded changes of another.
	dirs, err := journal.ParkedMemoryDirs(stateDir, id)
	if err != nil {
		return "", fmt.Errorf("dream: looking %q up in the staged dreams: %w", id, err)
	}
	found, err := audit.Find(ctx, stateDir, id)
	if err != nil {
		return "", fmt.Errorf("dream: looking %q up in the audit histories: %w", id, err)
	}
	for _, f := range found {
		dirs = appendNew(dirs, filepath.Clean(f.MemoryDir))
	}
	return oneMemoryDir(id, dirs, nil)
}

// inEvents lists, deduplicated, the memory dirs of the events whose task id
// starts with id.
func inEvents(stateDir, id string) ([]string, error) {
	events, err := telemetry.Open(stateDir).Read(time.Time{})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("dream: reading the event log: %w", err)
	}
	var dirs []string
	for _, ev := range events {
		if ev.TaskID != "" && ev.MemoryDir != "" && strings.HasPrefix(ev.TaskID, id) {
			dirs = appendNew(dirs, filepath.Clean(ev.MemoryDir))
		}
	}
	return dirs, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func oneMemoryDir(id string, dirs []string, err error) (string, error) {
	switch {
	case err != nil:
		return "", err
	case len(dirs) == 0:
		return "", fmt.Errorf("%w: %q", ErrUnknown, id)
	case len(dirs) > 1:
		sort.Strings(dirs)
		return "", &AmbiguousError{ID: id, MemoryDirs: dirs}
	}
	return dirs[0], nil
}
