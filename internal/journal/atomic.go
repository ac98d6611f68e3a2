package journal

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/dreamkit/dream/internal/fsutil"
)

// finishTemp fills, syncs, chmods and closes a freshly created temp file.
func finishTemp(f *os.File, perm os.FileMode, sync bool, fill func(io.Writer) error) error {
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// prepareTemp copies src to a new, synced temporary file beside rel inside
// root and returns its name; the caller renames it into place. Every step
// goes through the os.Root of the memory dir, so no symlink in the memory
// dir can redirect a write outside it. n numbers the file for the crash
// points. Without sync the caller flushes the file system before renaming.
//
// want, when known (a live commit), is the staged file's stat when its
// content was hashed: a file written since, before or during the copy,
// fails with ErrStagingChanged, so what lands is what the guards checked.
func prepareTemp(root *os.Root, src, rel string, perm os.FileMode, n int, sync bool, want fingerprint) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("install %s: %w", rel, err)
	}
	defer in.Close()
	unchanged := func() bool {
		if want.Ino == 0 {
			return true // no stat to compare (a roll-forward checks content)
		}
		info, err := in.Stat()
		return err == nil && statPrint(info).sameStat(want)
	}
	if !unchanged() {
		return "", fmt.Errorf("install %s: %w: written after it was checked", rel, ErrStagingChanged)
	}
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("install %s: %w", rel, err)
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", fmt.Errorf("install %s: %w", rel, err)
	}
	tmp := filepath.Join(dir, TempPrefix+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("install %s: %w", rel, err)
	}
	if err := finishTemp(f, perm, sync, func(w io.Writer) error { _, err := writeTempData(w, in); return err }); err != nil {
		root.Remove(tmp)
		return "", fmt.Errorf("install %s: %w", rel, err)
	}
	if !unchanged() {
		root.Remove(tmp)
		return "", fmt.Errorf("install %s: %w: written while it was copied", rel, ErrStagingChanged)
	}
	crashPoint("commit:tmp:%d", n)
	return tmp, nil
}

// linkTemp is prepareTemp for a linked staging (Options.LinkUnchanged):
// the staged file itself is hard-linked under a temporary name beside rel,
// and keeps its staged name, so nothing is copied or flushed a second time
// (syncStaged made it durable) and a roll-forward still finds it in
// staging. The runner of a linked staging only ever replaces files (see
// Options.LinkUnchanged), so the inode is written by no one once its
// content was checked; its stat is checked before and after the link all
// the same. ok is false, with no error, where no link can be made (another
// file system, no stat to check): the caller copies.
func linkTemp(root *os.Root, src, rel string, perm os.FileMode, n int, want fingerprint) (tmp string, ok bool, err error) {
	if want.Ino == 0 {
		return "", false, nil
	}
	info, err := os.Lstat(src)
	if err != nil {
		return "", false, fmt.Errorf("install %s: %w", rel, err)
	}
	if !info.Mode().IsRegular() || !statPrint(info).sameStat(want) {
		return "", false, fmt.Errorf("install %s: %w: written after it was checked", rel, ErrStagingChanged)
	}
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("install %s: %w", rel, err)
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", false, fmt.Errorf("install %s: %w", rel, err)
	}
	tmp = filepath.Join(dir, TempPrefix+hex.EncodeToString(suffix[:]))
	if err := linkIn(root, src, tmp); err != nil {
		return "", false, nil // the copy reports what is wrong, if anything
	}
	if info.Mode().Perm() != perm.Perm() {
		err = root.Chmod(tmp, perm.Perm())
	}
	// The link changed the inode's ctime, not its size or mtime.
	if li, lerr := root.Lstat(tmp); err == nil && (lerr != nil || statPrint(li).Ino != want.Ino || li.Size() != want.Size || li.ModTime().UnixNano() != want.MtimeNs) {
		err = fmt.Errorf("%w: replaced while it was installed", ErrStagingChanged)
	}
	if err != nil {
		root.Remove(tmp)
		return "", false, fmt.Errorf("install %s: %w", rel, err)
	}
	crashPoint("commit:tmp:%d", n)
	return tmp, true, nil
}

// writeTempData streams a staged file into its temporary file. It is a
// variable only so the journal's tests can make it fail as a full disk
// does (ENOSPC on the second file) and prove nothing is renamed.
var writeTempData = copyStream

// SyncDir flushes a directory's entries (new names, renames, removals) to
// disk.
func SyncDir(dir string) error { return fsutil.SyncDir(dir) }

// copyBufs recycles the buffers of copyStream: a commit of thousands of
// files would otherwise allocate a fresh 32 KB buffer per file and per hash.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copyStream is io.Copy with a pooled buffer: memory stays bounded and
// allocation-free whatever the number and size of the files.
// A destination that reads by itself (a file: copy_file_range) is left to
// do so; otherwise the source's WriteTo, which would allocate its own
// buffer, is hidden.
func copyStream(w io.Writer, r io.Reader) (int64, error) {
	if rf, ok := w.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	b := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(b)
	return io.CopyBuffer(w, struct{ io.Reader }{r}, *b)
}
