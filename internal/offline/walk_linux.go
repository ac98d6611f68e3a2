package offline

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/memory"
	"golang.org/x/sys/unix"
)

// memoryList is the memory's Markdown files as the scan reads them, and
// the directories that hold them, kept open so that each file is opened
// relative to its directory (no path walked again per file).
//
// One walk does what memory.List does (the same root, the same files, the
// same linked Markdown files set aside) with
// the directory read whole by getdents (no entry sorted or allocated but
// the names kept) and every directory opened relative to its parent with
// O_NOFOLLOW: no link inside the memory can send the walk, or a read,
// elsewhere.
type memoryList struct {
	root  string
	index bool
	// rels are the files in scan order: the index first, then the others
	// sorted by path; at says where each is (its directory and name).
	rels []string
	at   []fileAt
	dirs []int
	// links are the Markdown files that are symbolic links, sorted: a
	// dream reads and writes nothing through a link (see memory.Listing).
	links []string
}

// fileAt is a file's directory (an index into memoryList.dirs; -1 for one
// past maxOpenDirs) and where its name starts in its path.
type fileAt struct{ dir, base int32 }

// maxOpenDirs bounds the directories a listing keeps open: the files of
// any others are read through the memory reader, so that a memory of
// thousands of folders cannot run the process out of descriptors.
const maxOpenDirs = 256

func listMemory(dir string) (*memoryList, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("memory dir: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("memory dir %s: not a directory", dir)
	}
	root := dir
	if li, err := os.Lstat(dir); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if root, err = filepath.EvalSymlinks(dir); err != nil {
			return nil, fmt.Errorf("memory dir: %w", err)
		}
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("load memory dir %s: %w", dir, &os.PathError{Op: "open", Path: root, Err: err})
	}
	w := &walk{l: &memoryList{root: root}, buf: make([]byte, 32<<10)}
	w.dir(fd, "")
	l := w.l
	slices.Sort(l.links)
	if w.err != nil {
		l.close()
		return nil, fmt.Errorf("load memory dir %s: %w", dir, w.err)
	}
	type entry struct {
		rel string
		at  fileAt
	}
	es := make([]entry, len(l.rels))
	for i := range l.rels {
		es[i] = entry{l.rels[i], l.at[i]}
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
	l.rels, l.at = l.rels[:0], l.at[:0]
	if w.indexAt != nil {
		l.index = true
		l.rels, l.at = append(l.rels, memory.IndexFile), append(l.at, *w.indexAt)
	}
	for _, e := range es {
		l.rels, l.at = append(l.rels, e.rel), append(l.at, e.at)
	}
	return l, nil
}

// walk is one listing under way.
type walk struct {
	l       *memoryList
	buf     []byte
	indexAt *fileAt
	// err is the first directory that could not be read.
	err error
}

// dir lists the directory open at fd, whose path in the memory is prefix
// (empty or ending in a slash), and the directories under it.
func (w *walk) dir(fd int, prefix string) {
	d := int32(-1)
	if len(w.l.dirs) < maxOpenDirs {
		d = int32(len(w.l.dirs))
		w.l.dirs = append(w.l.dirs, fd)
	} else {
		defer unix.Close(fd)
	}
	var subdirs []string
	for {
		n, err := unix.ReadDirent(fd, w.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			w.fail(&os.PathError{Op: "readdirent", Path: prefix, Err: err})
			return
		}
		if n <= 0 {
			break
		}
		for b := w.buf[:n]; len(b) >= 19; {
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				w.fail(&os.PathError{Op: "readdirent", Path: prefix, Err: syscall.EIO})
				return
			}
			typ, name := b[18], b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if len(name) == 0 || name[0] == '.' {
				continue // ".", "..", and hidden entries (.git, swap files)
			}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if err := unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					continue // gone since it was listed
				}
				typ = dtOf(st.Mode)
			}
			// filepath.Ext(name) is ".md" in any case exactly when the
			// name ends so (a name holds no separator).
			md := len(name) >= 3 && bytes.EqualFold(name[len(name)-3:], []byte(".md"))
			switch typ {
			case unix.DT_DIR:
				subdirs = append(subdirs, string(name))
			case unix.DT_REG:
				if !md {
					continue
				}
				at := fileAt{d, int32(len(prefix))}
				if prefix == "" && string(name) == memory.IndexFile {
					w.indexAt = &at
					continue
				}
				w.l.rels = append(w.l.rels, prefix+string(name))
				w.l.at = append(w.l.at, at)
			case unix.DT_LNK:
				if md {
					w.l.links = append(w.l.links, prefix+string(name))
				}
			}
		}
	}
	for _, name := range subdirs {
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			w.fail(&os.PathError{Op: "open", Path: prefix + name, Err: err})
			continue
		}
		w.dir(sub, prefix+name+"/")
	}
}

func (w *walk) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func dtOf(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN
}

// read returns the bytes of file i (in scan order) and its permissions,
// read through its directory as memory.Reader reads a file: opened without
// blocking (a FIFO or a device put in its place is refused, not waited
// on) and checked to be a regular file on the descriptor; and, unlike
// the reader, never through a link. ok is false when the listing has no
// directories to read from (the caller reads through memory.Reader).
func (l *memoryList) read(i int) (data []byte, perm fs.FileMode, ok bool, err error) {
	if l == nil || i >= len(l.at) || l.dirs == nil || l.at[i].dir < 0 {
		return nil, 0, false, nil
	}
	at, rel := l.at[i], l.rels[i]
	fail := func(err error) ([]byte, fs.FileMode, bool, error) {
		return nil, 0, true, fmt.Errorf("read memory file %s: %w", rel, err)
	}
	fd, err := unix.Openat(l.dirs[at.dir], rel[at.base:], unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Openat(l.dirs[at.dir], rel[at.base:], unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return fail(&os.PathError{Op: "openat", Path: rel, Err: err})
	}
	defer unix.Close(fd)
	var sys unix.Stat_t
	if err := unix.Fstat(fd, &sys); err != nil {
		return fail(&os.PathError{Op: "fstat", Path: rel, Err: err})
	}
	if sys.Mode&unix.S_IFMT != unix.S_IFREG {
		return fail(fmt.Errorf("%w: it is a %s", fsutil.ErrNotRegular, fsutil.KindOf(modeOf(sys.Mode))))
	}
	data = make([]byte, 0, int(sys.Size)+1)
	for {
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail(&os.PathError{Op: "read", Path: rel, Err: err})
		}
		if n == 0 {
			break
		}
		data = data[:len(data)+n]
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	return data, fs.FileMode(sys.Mode & 0o777), true, nil
}

// modeOf is a file's type as fs.FileMode, for an error message.
func modeOf(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFDIR:
		return fs.ModeDir
	}
	return fs.ModeIrregular
}

func (l *memoryList) close() {
	if l == nil {
		return
	}
	for _, fd := range l.dirs {
		unix.Close(fd)
	}
	l.dirs = nil
}
