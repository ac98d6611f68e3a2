package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// ErrNotRegular reports a path that is neither a regular file nor a
// directory: a FIFO, a socket, a device. Opening a FIFO for reading blocks
// until a writer appears, which at night is never, and a device can be
// endless; no tool reads one.
var ErrNotRegular = errors.New("not a regular file")

// openRegular opens name under root for reading without ever blocking in
// open(2): the open is non-blocking (a FIFO opens at once instead of waiting
// for a writer) and the opened descriptor is then checked with fstat, so a
// path swapped between a stat and the open cannot slip a FIFO through. Only
// regular files, and directories when allowDir is set, are returned.
func openRegular(root *os.Root, name string, allowDir bool) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|nonBlockFlag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	if fi.Mode().IsRegular() || allowDir && fi.IsDir() {
		return f, fi, nil
	}
	_ = f.Close()
	return nil, nil, fmt.Errorf("%w: it is a %s", ErrNotRegular, kindOf(fi.Mode()))
}

// kindOf names a non-regular file type for an error message.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

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
