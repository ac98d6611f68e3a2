package journal

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Original says where rel (slash-separated, relative to the memory dir) as
// it was when the transaction began can be read, without a copy of the
// memory having been made: existed is false when there was no such file;
// path is the memory's file, and intact reports whether it is provably still
// that version (its inode, size and modification time are the ones recorded
// at Begin, as git's index tells an unchanged file). When it is not intact
// someone edited it during the dream, and the caller must find the version
// elsewhere (the audit history recorded the memory just before the dream).
//
// A reader of path should ask again after reading: an edit made in place
// while it read leaves the file not intact.
func (t *Txn) Original(rel string) (path string, existed, intact bool) {
	rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	base, ok := t.rec.Base[rel]
	if !ok {
		return "", false, false
	}
	path = filepath.Join(t.memDir, filepath.FromSlash(rel))
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return path, true, false
	}
	return path, true, t.sameOriginal(statPrint(info), base)
}

// ReadOriginal reads rel as it was when the transaction began, when the
// memory's file provably still is that version: one open, with the file's
// stat checked against the base before the read and unchanged after it (an
// edit made in place meanwhile leaves it not intact). It costs one path
// lookup where Original, a read and Original again cost three. existed is
// false when there was no such file; when intact is false (someone changed
// it, or it is no longer a regular file) data is nil and the caller must
// find the version elsewhere, as for Original.
func (t *Txn) ReadOriginal(rel string) (data []byte, existed, intact bool, err error) {
	rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	base, ok := t.rec.Base[rel]
	if !ok {
		return nil, false, false, nil
	}
	f, err := openNoFollow(filepath.Join(t.memDir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, true, false, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, true, false, nil
	}
	first := statPrint(info)
	if !t.sameOriginal(first, base) {
		return nil, true, false, nil
	}
	if data, err = readSized(f, info.Size()); err != nil {
		return nil, true, false, err
	}
	again, err := f.Stat()
	if err != nil || !statPrint(again).sameStat(first) {
		return nil, true, false, nil
	}
	return data, true, true, nil
}

// errNotRegular is what openNoFollow says of a symlink (or, where it can
// tell, anything but a regular file) at a path.
var errNotRegular = errors.New("not a regular file")

// readSized reads an open file to its end, expecting size bytes (it may
// have grown or shrunk since the stat).
func readSized(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew while being read
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
