package dream

import (
	"context"

	"github.com/dreamkit/dream/internal/offline"
)

// offlineEngine is the offline engine's mechanical fixes as a Runner, for
// the tests inside package dream: they cannot import package runner, which
// imports dream. Like runner.Offline it replaces files, so it gets the
// linked staging, and it is strict: its fix records account for every
// change.
type offlineEngine struct{}

func (offlineEngine) ReplacesFiles() bool { return true }

func (offlineEngine) Run(ctx context.Context, job Job) (Outcome, error) {
	rep, err := offline.Run(ctx, offline.Options{MemoryDir: job.MemoryDir, RepoDir: job.RepoDir, Layout: offline.LayoutFor("")})
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{FilesTouched: rep.FilesTouched, Strict: true}
	for _, f := range rep.Fixes {
		out.Accounted = append(out.Accounted, Accounted{File: f.File, Start: f.Start, End: f.End})
	}
	return out, nil
}
