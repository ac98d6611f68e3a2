package main

import (
	"path/filepath"

	"github.com/dreamkit/dream/jobs"
)

// memoryScope is the memory dir the location flags name, for the commands
// that read the whole state dir (tasks, kill, stats): given, they keep to
// that memory's dreams; without one ("" and no error) they show them all.
func (a *app) memoryScope() (string, error) {
	s := a.loaded.Settings
	if s.MemoryDir == "" && s.Host == "" {
		return "", nil
	}
	mem, _, _, err := a.locations()
	if err != nil {
		return "", err
	}
	return canonicalDir(mem), nil
}

// shows reports whether a dream of memory dir mem and job (empty: the
// memory dream) is one `tasks` and `stats` show: with --job NAME, that
// job's, wherever it writes (its dir is not the memory's); with --job
// memory, the memory dreams in scope; else every dream in scope.
func (a *app) shows(scope, mem, job string) bool {
	switch {
	case a.isJob():
		return job == a.job
	case a.job == jobs.Memory:
		return job == "" && inScope(scope, mem)
	}
	return inScope(scope, mem)
}

// inScope reports whether a dream of memory dir mem is in scope.
func inScope(scope, mem string) bool {
	return scope == "" || canonicalDir(mem) == scope
}

// canonicalDir is dir absolute, cleaned and with its links resolved, so
// that two spellings of one directory compare equal.
func canonicalDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Clean(dir)
}
