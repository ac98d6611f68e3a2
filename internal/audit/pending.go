package audit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// index is the index file the history's git processes use.
func (h *History) index() string {
	if h.indexFile != "" {
		return h.indexFile
	}
	return filepath.Join(h.gitDir, "index")
}

// Pending is the tree RecordHandEdits would record now, without recording
// anything: the same staging runs on a copy of the index, and neither the
// index nor HEAD moves. `dream status` merges it to say what the next sync
// will do with edits not yet recorded. The caller need not hold the lock.
func (h *History) Pending(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp(h.gitDir, "pending-")
	if err != nil {
		return "", fmt.Errorf("audit: pending edits: %w", err)
	}
	defer os.RemoveAll(dir)
	p := *h
	p.indexFile = filepath.Join(dir, "index")
	if err := copyFile(h.index(), p.indexFile); err != nil {
		return "", fmt.Errorf("audit: pending edits: %w", err)
	}
	if _, err := p.stageAll(ctx); err != nil {
		return "", fmt.Errorf("audit: pending edits: %w", err)
	}
	out, err := p.git(ctx, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("audit: pending edits: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// copyFile copies src to dst; a missing src (no index yet: nothing was
// ever recorded) leaves dst absent too, which git reads as an empty index.
func copyFile(src, dst string) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}
