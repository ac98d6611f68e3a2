package memory

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Load reads a memory directory. It skips the consolidation lock, hidden
// files and directories (editors' swap files, .git), and records any other
// non-markdown file in Other. Symbolic links are not followed: memory is a
// plain tree, and following a link could read outside it.
func Load(dir string) (*Dir, error) {
	l, err := List(dir)
	if err != nil {
		return nil, err
	}
	r, err := OpenReader(l.Root)
	if err != nil {
		return nil, fmt.Errorf("load memory dir %s: %w", dir, err)
	}
	defer r.Close()
	d := &Dir{Root: dir, Other: l.Other}
	if l.Index {
		data, _, err := r.ReadFile(IndexFile)
		if err != nil {
			return nil, fmt.Errorf("load memory dir %s: %w", dir, err)
		}
		d.Index = ParseIndex(data)
	}
	for _, rel := range l.Topics {
		data, _, err := r.ReadFile(rel)
		if err != nil {
			return nil, fmt.Errorf("load memory dir %s: %w", dir, err)
		}
		d.Topics = append(d.Topics, ParseTopic(rel, data))
	}
	return d, nil
}

// SymlinkError reports a memory file that is a symbolic link. dream edits
// memory by writing a new file and renaming it into place; through a link
// that would replace the link with a copy and leave its target stale, so a
// linked file is refused up front, with what to do instead.
type SymlinkError struct {
	// Path is relative to the memory dir; Target is what the link names.
	Path, Target string
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link to %s: dream edits memory files in place and will not write through a link; replace the link with the file itself, or point --memory-dir at the directory that holds %s",
		e.Path, e.Target, filepath.Base(e.Target))
}

// CheckSymlinks returns a *SymlinkError for the first Markdown file of dir
// (hidden entries skipped, as Load does) that is a symbolic link.
func CheckSymlinks(dir string) error {
	root := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		root = r
	}
	var found *SymlinkError
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || found != nil {
			return filepath.SkipDir
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.Type()&fs.ModeSymlink != 0 && strings.EqualFold(filepath.Ext(e.Name()), ".md") {
			rel, _ := filepath.Rel(root, p)
			target, _ := os.Readlink(p)
			found = &SymlinkError{Path: filepath.ToSlash(rel), Target: target}
			return filepath.SkipAll
		}
		return nil
	})
	if found != nil {
		return found
	}
	if err != nil {
		return fmt.Errorf("memory dir %s: %w", dir, err)
	}
	return nil
}
