package journal

import (
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
