package sandbox

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/dreamkit/dream/internal/fsutil"
)

// ErrNotRegular reports a path that is neither a regular file nor a
// directory (fsutil.ErrNotRegular: one error for every reader).
var ErrNotRegular = fsutil.ErrNotRegular

// openRegular is fsutil.OpenRegular: a non-blocking open that returns only
// regular files, and directories when allowDir is set.
func openRegular(root *os.Root, name string, allowDir bool) (*os.File, fs.FileInfo, error) {
	return fsutil.OpenRegular(root, name, allowDir)
}

func kindOf(m fs.FileMode) string { return fsutil.KindOf(m) }

// regularFS is a root as an fs.FS whose Open never blocks and never yields
// anything but regular files and directories, so that a walk, a glob, a
// .gitignore load or an fs.ReadFile over it is as safe as the tools' own
// opens. Stat and ReadDir do not open files and are passed through.
type regularFS struct {
	root *os.Root
	// guard, when set, refuses credential locations (see ReadOnly.FS);
	// skipped counts the entries ReadDir left out for it.
	guard   *openRoot
	skipped *skipCounter
}

// deny returns the refusal for a credential name, or nil.
func (r regularFS) deny(op, name string) error {
	if r.guard != nil && r.guard.denied(filepath.FromSlash(name)) {
		return &fs.PathError{Op: op, Path: name, Err: ErrCredential}
	}
	return nil
}

func (r regularFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if r.guard != nil && r.guard.parentDenied(filepath.FromSlash(name)) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrCredential}
	}
	f, fi, err := openRegular(r.root, filepath.FromSlash(name), true)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if r.guard != nil && r.guard.openedDenied(fi) {
		_ = f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrCredential}
	}
	return f, nil
}

func (r regularFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if err := r.deny("stat", name); err != nil {
		return nil, err
	}
	return r.root.Stat(filepath.FromSlash(name))
}

func (r regularFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	if err := r.deny("readdir", name); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(r.root.FS(), path.Clean(name))
	if r.guard == nil {
		return entries, err
	}
	kept := entries[:0]
	for _, e := range entries {
		if r.guard.deniedEntry(path.Clean(name), e) {
			if r.skipped != nil {
				r.skipped.n.Add(1)
			}
			continue
		}
		kept = append(kept, e)
	}
	return kept, err
}

var (
	_ fs.StatFS    = regularFS{}
	_ fs.ReadDirFS = regularFS{}
)
