package lock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
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
}

// readState opens the lock file without following a symlink and reads a
// bounded prefix of its body.
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
	fi, err := f.Stat()
	if err != nil {
		return fileState{}, fmt.Errorf("reading lock file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fileState{}, fmt.Errorf("lock file %s is not a regular file (%v)", path, fi.Mode().Type())
	}
	st := fileState{exists: true, mtime: fi.ModTime(), size: fi.Size()}
	buf, err := io.ReadAll(io.LimitReader(f, maxBody+1))
	if err != nil {
		return fileState{}, fmt.Errorf("reading lock file: %w", err)
	}
	if len(buf) > maxBody {
		st.tooBig = true
	} else {
		st.body = buf
	}
	return st, nil
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

// writeLockFile replaces the lock file with body through a temporary file
// and a rename, so that a reader (another agent deciding whether to reclaim)
// sees the old body or the new one, never an empty half-write, and so that a
// symlink at the path is replaced rather than written through. When mtime is
// non-zero it is set on the temporary file before the rename.
//
// Only a PID body is fsynced: after a power loss mid-dream it must read back
// as our PID so that the guard record's prior applies. An empty body (Complete,
// Rollback) needs no fsync, because a file that lost its data after a crash
// reads as empty anyway, which is what was meant.
func writeLockFile(path string, body []byte, mtime time.Time) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, fsutil.TempPrefix+FileName+"-*")
	if err != nil {
		return fmt.Errorf("writing lock file: %w", err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(body); err != nil {
		return fmt.Errorf("writing lock file: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing lock file: %w", err)
	}
	if len(body) > 0 {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing lock file: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing lock file: %w", err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(tmp, mtime, mtime); err != nil {
			return fmt.Errorf("setting lock file mtime: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing lock file: %w", err)
	}
	done = true
	return nil
}
