//go:build linux

package gate

import (
	"encoding/binary"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// fastStatAvailable: on Linux the scan stats each transcript with fstatat
// relative to the open directory, which skips re-resolving the whole path
// from the root for every file (what DirEntry.Info's lstat of a joined path
// does).
const fastStatAvailable = true

// openDir opens path as a directory. Below the scan root it refuses to
// follow a symlink (O_NOFOLLOW), closing the race in which a listed
// directory is swapped for a link before it is opened.
func openDir(path string, followRoot bool) (*os.File, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !followRoot {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Open(path, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// statAfter reports whether the regular file name in directory d was
// modified strictly after since. A file that vanished or became something
// else since it was listed does not count. buf is the caller's scratch for
// the NUL-terminated name, reused across calls.
func statAfter(d *os.File, name string, since time.Time, buf *[]byte) bool {
	var st unix.Stat_t
	for {
		err := fstatatNoFollow(int(d.Fd()), name, &st, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return false
		}
		return time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)).After(since) // int32 fields on 32-bit
	}
}

// direntBufSize is how much of a directory one getdents64 call reads; it is
// what find(1) uses, and four times os.File.ReadDir's buffer, so a
// directory of 10,000 transcripts is listed in about ten calls.
const direntBufSize = 32 << 10

// direntBufs recycles the listing buffers across directories and workers.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, direntBufSize); return &b }}

// The fields of struct linux_dirent64 (getdents64(2)): d_ino at 0, d_off at
// 8, d_reclen at 16, d_type at 18, the NUL-terminated d_name from 19.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// listDir calls fn with each entry of d but "." and "..", and the type the
// listing reports, reading getdents64 directly: os.File.ReadDir builds an
// fs.DirEntry with its own strings for every name (about four allocations
// per transcript), where this converts each buffer to one string that all
// its names share.
func listDir(d *os.File, fn func(name string, t entryType)) error {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	fd := int(d.Fd())
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "getdents", Path: d.Name(), Err: err}
		}
		if n <= 0 {
			return nil
		}
		batch := string(buf[:n])
		for off := 0; off+direntName <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+direntReclen:]))
			if reclen < direntName || off+reclen > n {
				return &os.PathError{Op: "getdents", Path: d.Name(), Err: unix.EIO}
			}
			ino := binary.NativeEndian.Uint64(buf[off:])
			typ := buf[off+direntType]
			name := batch[off+direntName : off+reclen]
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			// A zero inode is a deleted entry some filesystems still list
			// (os.File.ReadDir skips them too).
			if ino == 0 || name == "." || name == ".." || name == "" {
				continue
			}
			fn(name, direntEntryType(typ))
		}
	}
}

// direntEntryType maps d_type to an entryType.
func direntEntryType(t uint8) entryType {
	switch t {
	case unix.DT_DIR:
		return typeDir
	case unix.DT_REG:
		return typeRegular
	case unix.DT_UNKNOWN:
		return typeUnknown
	}
	return typeOther
}
