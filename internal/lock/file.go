package lock

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// fileState is what one look at the lock file saw: mtime and body come from
// the same open file, so they describe the same inode.
type fileState struct {
	exists  bool
	symlink bool // the path is a symlink, never followed
	mtime   time.Time
	size    int64
	body    []byte // at most maxBody bytes; nil when the file is larger
	tooBig  bool
	info    os.FileInfo // of the open file; nil for a symlink or no file
	// holder is the record on the inode itself (holderAttr), if any.
	holder    record
	hasHolder bool
}

// readState opens the lock file read-only without following a symlink (and
// without blocking on a FIFO planted at its path) and reads a bounded prefix
// of its body. A path that is neither missing, a symlink nor a readable
// regular file is an error: the caller must fail closed.
func readState(path string) (fileState, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|readFlags, 0)
	if errors.Is(err, os.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fileState{exists: true, symlink: true, mtime: fi.ModTime()}, nil
		}
		return fileState{}, fmt.Errorf("opening lock file: %w", err)
	}
	defer f.Close()
	return readOpen(f)
}

// readOpen reads the state of an open lock file: fstat, then a bounded
// pread from offset 0 (so it works on the descriptor TryAcquire writes).
func readOpen(f *os.File) (fileState, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileState{}, fmt.Errorf("reading lock file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fileState{}, notRegular(f.Name(), fi.Mode())
	}
	st := fileState{exists: true, mtime: fi.ModTime(), size: fi.Size(), info: fi}
	st.holder, st.hasHolder = readHolderAttr(f)
	buf := make([]byte, maxBody+1)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fileState{}, fmt.Errorf("reading lock file %s: %w", f.Name(), err)
	}
	if n > maxBody {
		st.tooBig = true
	} else {
		st.body = buf[:n]
	}
	return st, nil
}

// notRegular is the error for a lock path that holds a directory, a FIFO, a
// socket or a device: the lock is never taken through it.
func notRegular(path string, m fs.FileMode) error {
	kind := "special file"
	switch {
	case m.IsDir():
		kind = "directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "FIFO"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeDevice != 0:
		kind = "device"
	}
	return fmt.Errorf("lock file %s is not a regular file (a %s): remove or rename it", path, kind)
}

// openLockFile opens the lock file read-write without following a symlink,
// creating it (created = true) when there is none. A symlink at the path is
// removed (the link, never its target) and replaced by a regular file. Any
// other non-regular file is an error, checked before the open so that a
// device node is never opened at all.
func openLockFile(path string) (f *os.File, created bool, err error) {
	for range maxOpenAttempts {
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|readFlags, 0o644)
			if errors.Is(err, os.ErrExist) {
				continue // another process created it first
			}
			if err != nil {
				return nil, false, fmt.Errorf("creating lock file: %w", err)
			}
			// The umask may have narrowed the mode; the other agents (and
			// other users sharing the memory dir) must be able to read it.
			if err := f.Chmod(0o644); err != nil {
				f.Close()
				return nil, false, fmt.Errorf("creating lock file: %w", err)
			}
			return f, true, nil
		case err != nil:
			return nil, false, fmt.Errorf("opening lock file: %w", err)
		case fi.Mode()&os.ModeSymlink != 0:
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, false, fmt.Errorf("replacing symlinked lock file: %w", err)
			}
			continue
		case !fi.Mode().IsRegular():
			return nil, false, notRegular(path, fi.Mode())
		}
		f, err := os.OpenFile(path, os.O_RDWR|readFlags, 0)
		if err != nil {
			if fi, lerr := os.Lstat(path); errors.Is(lerr, os.ErrNotExist) || (lerr == nil && fi.Mode()&os.ModeSymlink != 0) {
				continue // swapped between the lstat and the open
			}
			return nil, false, fmt.Errorf("opening lock file: %w", err)
		}
		ofi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("opening lock file: %w", err)
		}
		if !ofi.Mode().IsRegular() {
			f.Close()
			return nil, false, notRegular(path, ofi.Mode())
		}
		return f, false, nil
	}
	return nil, false, fmt.Errorf("opening lock file: %s keeps changing", path)
}

// sameFile reports whether path (not followed) still names f's inode.
func sameFile(f *os.File, path string) bool {
	ofi, err := f.Stat()
	if err != nil {
		return false
	}
	pfi, err := os.Lstat(path)
	return err == nil && os.SameFile(ofi, pfi)
}

// writeBody replaces the lock file's body in place. The new bytes go in with
// one write at offset 0 before the file is cut to length, so that a reader
// (another agent deciding whether to reclaim) never sees an empty body in
// between, which it would take for an idle lock. The body is fsynced: after
// a power loss mid-dream it must read back as our PID so that the guard
// record's prior applies.
func writeBody(f *os.File, body []byte) error {
	if _, err := f.WriteAt(body, 0); err != nil {
		return fmt.Errorf("writing lock file: %w", err)
	}
	if err := f.Truncate(int64(len(body))); err != nil {
		return fmt.Errorf("writing lock file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing lock file: %w", err)
	}
	return nil
}

// restoreFile puts back the body and mtime a failed acquisition found.
// Best effort: it runs on a path that is already failing.
func restoreFile(f *os.File, orig fileState) {
	if orig.tooBig {
		// We never read the whole body; an empty one with the old mtime
		// means the same to every agent (no live holder).
		_ = f.Truncate(0)
	} else {
		_ = writeBody(f, orig.body)
	}
	if orig.hasHolder {
		writeHolderAttr(f, orig.holder)
	} else {
		clearHolderAttr(f)
	}
	_ = setFileTimes(f, f.Name(), orig.mtime)
}

// removeIfSame removes the lock file we created, if the path still names it.
func removeIfSame(path string, f *os.File) {
	if sameFile(f, path) {
		_ = os.Remove(path)
	}
}

// parsePID reads a lock body as the holder's PID. Surrounding whitespace is
// tolerated (other agents may end it with a newline); ok is false for an
// empty body, garbage, or a PID outside 1..MaxPID.
func parsePID(body []byte) (pid int, ok bool) {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > MaxPID {
		return 0, false
	}
	return n, true
}

// describeBody names what a lock body holds, for error messages.
func describeBody(st fileState) string {
	switch {
	case !st.exists:
		return "lock file removed"
	case st.symlink:
		return "lock file is a symlink"
	case st.tooBig:
		return fmt.Sprintf("%d-byte body", st.size)
	}
	if pid, ok := parsePID(st.body); ok {
		return "pid " + strconv.Itoa(pid)
	}
	if len(strings.TrimSpace(string(st.body))) == 0 {
		return "empty body"
	}
	return fmt.Sprintf("body %q", st.body)
}
