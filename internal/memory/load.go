package memory

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Load reads a memory directory. It skips the consolidation lock, hidden
// files and directories (editors' swap files, .git), and records any other
// non-markdown file in Other. Symbolic links are not followed: memory is a
// plain tree, and following a link could read outside it.
func Load(dir string) (*Dir, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("memory dir: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("memory dir %s: not a directory", dir)
	}
	d := &Dir{Root: dir}
	// The root itself may be a link (a memory dir symlinked into place):
	// WalkDir would not descend into it, and the memory would look empty.
	root := dir
	if li, err := os.Lstat(dir); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if root, err = filepath.EvalSymlinks(dir); err != nil {
			return nil, fmt.Errorf("memory dir: %w", err)
		}
	}
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() || !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("memory file %s: %w", p, err)
		}
		rel = filepath.ToSlash(rel)
		if !strings.EqualFold(filepath.Ext(name), ".md") {
			d.Other = append(d.Other, rel)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read memory file: %w", err)
		}
		if rel == IndexFile {
			d.Index = ParseIndex(data)
			return nil
		}
		d.Topics = append(d.Topics, ParseTopic(rel, data))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load memory dir %s: %w", dir, err)
	}
	sort.Slice(d.Topics, func(i, j int) bool { return d.Topics[i].Path < d.Topics[j].Path })
	sort.Strings(d.Other)
	return d, nil
}
