//go:build !linux

package gate

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// errNotDir is what openDir reports for a path that is not a directory, so
// that the caller can say so in words.
var errNotDir error = syscall.ENOTDIR

// fastStatAvailable is false off Linux: the portable scan uses
// DirEntry.Info (an lstat), which is correct everywhere.
const fastStatAvailable = false

// openDir opens path as a directory. Off Linux there is no portable
// O_NOFOLLOW for directories; symlinks are still never entered because the
// walk only descends into entries whose listed type is a directory.
func openDir(path string, followRoot bool) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.IsDir() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	return f, nil
}

// statAfter is never called off Linux (fastStatAvailable is false); it
// falls back to an lstat by path for completeness.
func statAfter(d *os.File, name string, since time.Time, _ *[]byte) bool {
	info, err := os.Lstat(d.Name() + string(os.PathSeparator) + name)
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	return info.ModTime().After(since)
}

// readBatch is how many directory entries are read per round. It bounds
// memory on a huge flat directory while keeping system calls few.
const readBatch = 1024

// listDir calls fn with each entry of d and the type its listing reports.
func listDir(d *os.File, fn func(name string, t entryType)) error {
	for {
		entries, err := d.ReadDir(readBatch)
		for _, e := range entries {
			fn(e.Name(), dirEntryType(e.Type()))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		// ReadDir(n > 0) never returns no entries and no error, but an
		// empty batch must not spin.
		if err != nil || len(entries) == 0 {
			return err
		}
	}
}

// dirEntryType maps a listed type to an entryType.
func dirEntryType(m fs.FileMode) entryType {
	switch t := m.Type(); {
	case t == 0:
		return typeRegular
	case t.IsDir():
		return typeDir
	case t&fs.ModeIrregular != 0:
		return typeUnknown
	}
	return typeOther
}
