package gatestamp

import (
	"errors"
	"strconv"
	"syscall"
	"time"
)

// The kinds a fingerprint starts with.
const (
	kindRegular = "f"
	kindDir     = "d"
	kindSymlink = "l"
	kindOther   = "o"
)

// fileInfo is what a fingerprint keeps of one stat.
type fileInfo struct {
	mode         uint32
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // unix nanoseconds
}

// fingerprint is path's identity and times as lstat sees them, then, for a
// symlink, as stat sees them through it; for a path that does not exist,
// "absent" and its nearest existing parent's fingerprint. newest is the
// latest mtime or ctime among what it looked at.
func fingerprint(path string) (fp string, newest time.Time, err error) {
	fi, err := stat(path, false)
	if isAbsent(err) {
		i := lastSlash(path)
		if i < 0 || path == "/" {
			return "", time.Time{}, errors.New(path + ": no existing parent")
		}
		parent := path[:i]
		if parent == "" {
			parent = "/"
		}
		pfp, pnewest, err := fingerprint(parent)
		if err != nil {
			return "", time.Time{}, err
		}
		return "absent<" + pfp, pnewest, nil
	}
	if err != nil {
		return "", time.Time{}, errors.New(path + ": " + err.Error())
	}
	fp, newest = fi.String(), fi.newest()
	if hasPrefix(fp, kindSymlink) {
		ti, err := stat(path, true)
		switch {
		case isAbsent(err):
			fp += ">absent"
		case err != nil:
			return "", time.Time{}, errors.New(path + ": " + err.Error())
		default:
			fp += ">" + ti.String()
			if t := ti.newest(); t.After(newest) {
				newest = t
			}
		}
	}
	return fp, newest, nil
}

func isAbsent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR)
}

// String is the fingerprint of one stat: kind, mode, device, inode, size,
// mtime and ctime.
func (fi fileInfo) String() string {
	kind := kindOther
	switch fi.mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		kind = kindRegular
	case syscall.S_IFDIR:
		kind = kindDir
	case syscall.S_IFLNK:
		kind = kindSymlink
	}
	b := make([]byte, 0, 96)
	b = append(b, kind...)
	for _, n := range []uint64{uint64(fi.mode), fi.dev, fi.ino} {
		b = strconv.AppendUint(append(b, ':'), n, 10)
	}
	for _, n := range []int64{fi.size, fi.mtime, fi.ctime} {
		b = strconv.AppendInt(append(b, ':'), n, 10)
	}
	return string(b)
}

func (fi fileInfo) newest() time.Time {
	return time.Unix(0, max(fi.mtime, fi.ctime))
}
