package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular reports a path that is neither a regular file nor a
// directory: a FIFO, a socket, a device. Opening a FIFO for reading blocks
// until a writer appears, which at night is never, and a device can be
// endless; nothing dream reads is one.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens name under root for reading without ever blocking in
// open(2): the open is non-blocking (a FIFO opens at once instead of waiting
// for a writer) and the opened descriptor is then checked with fstat, so a
// path swapped between a stat and the open cannot slip a FIFO through. Only
// regular files, and directories when allowDir is set, are returned. It is
// the one such open: the sandbox's tools and the offline engine's reads of
// memory both use it.
func OpenRegular(root *os.Root, name string, allowDir bool) (*os.File, fs.FileInfo, error) {
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
	return nil, nil, fmt.Errorf("%w: it is a %s", ErrNotRegular, KindOf(fi.Mode()))
}

// KindOf names a non-regular file type for an error message.
func KindOf(m fs.FileMode) string {
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
