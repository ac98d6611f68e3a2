// Package demo carries the example project that `dream demo` dreams over: a
// tiny Go URL shortener, its agent memory with planted defects, and the
// session transcripts that led to them. The example lives under testdata so
// that the go tool never builds or vets its Go files as part of dream.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/memory"
)

//go:embed testdata/example
var example embed.FS

const exampleRoot = "testdata/example"

// renames maps embedded names to their real names: a go.mod cannot be
// embedded from inside another module, so it is stored under another name.
var renames = map[string]string{"go.mod.txt": "go.mod"}

// Layout is where Materialize put the example.
type Layout struct {
	Root, MemoryDir, SessionsDir, RepoDir string
}

// Materialize writes the example into dir (which must be empty or absent)
// and sets its times relative to now, so that the demo behaves the same on
// any day:
//   - every memory file is dated one day before now, so "yesterday" in it
//     resolves to two days before now, deterministically;
//   - the consolidation lock is 25 hours old, past the 24-hour time gate;
//   - each transcript is newer than the lock (one to five hours old), so
//     the session gate, which counts transcripts touched since the last
//     consolidation, opens.
func Materialize(dir string, now time.Time) (Layout, error) {
	l := Layout{Root: dir,
		MemoryDir:   filepath.Join(dir, "memory"),
		SessionsDir: filepath.Join(dir, "sessions"),
		RepoDir:     filepath.Join(dir, "repo")}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return l, fmt.Errorf("demo: %s is not empty", dir)
	}
	err := fs.WalkDir(example, exampleRoot, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := p[len(exampleRoot):]
		if rel == "" {
			return nil
		}
		rel = rel[1:]
		if to, ok := renames[path.Base(rel)]; ok {
			rel = path.Join(path.Dir(rel), to)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := example.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return l, fmt.Errorf("demo: write example: %w", err)
	}
	if err := setTimes(l, now); err != nil {
		return l, fmt.Errorf("demo: %w", err)
	}
	return l, nil
}

func setTimes(l Layout, now time.Time) error {
	memTime := now.Add(-24 * time.Hour)
	entries, err := os.ReadDir(l.MemoryDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(l.MemoryDir, e.Name()), memTime, memTime); err != nil {
			return err
		}
	}
	lock := filepath.Join(l.MemoryDir, memory.LockFile)
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		return err
	}
	lockTime := now.Add(-25 * time.Hour)
	if err := os.Chtimes(lock, lockTime, lockTime); err != nil {
		return err
	}
	sessions, err := os.ReadDir(l.SessionsDir)
	if err != nil {
		return err
	}
	for i, e := range sessions { // ReadDir sorts, so the times are stable
		t := now.Add(-time.Duration(len(sessions)-i) * time.Hour)
		if err := os.Chtimes(filepath.Join(l.SessionsDir, e.Name()), t, t); err != nil {
			return err
		}
	}
	return nil
}
