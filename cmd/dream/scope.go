package main

import "path/filepath"

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
