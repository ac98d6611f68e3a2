// Package fsutil holds the file-system primitives dream shares. The main
// one writes a file atomically: a temporary file beside the target, fsynced,
// renamed over the target, then the directory fsynced. A reader sees the old
// file or the new one, never half of either, even if the process dies
// mid-write.
package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix starts the name of every temporary file dream creates, so that
// recovery can recognise and remove strays.
const TempPrefix = ".dream-tmp-"

// WriteFileAtomic is the one write of a whole file: path is replaced by
// data through a temporary file beside it (named with TempPrefix) renamed
// over it, so that a reader, or a process after a crash, sees the old file
// or the new one and never half of either. Missing parent directories are
// created; the file gets perm.
//
// durable also fsyncs the file before the rename and the directory after
// it, so that the new file survives a crash of the machine. Without it the
// write is atomic against a crash of the process only: for files the next
// write supersedes or a later step makes durable (progress entries,
// cursors, a dream's staging copy), where a sync per file costs more than
// the file is worth.
func WriteFileAtomic(path string, data []byte, perm os.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := replace(osDir{}, path, writeAll(data), perm, durable); err != nil {
		return err
	}
	if durable {
		return SyncDir(dir)
	}
	return nil
}

// SyncDir fsyncs a directory so that a rename in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// WriteFileAtomicIn is WriteFileAtomic for a path relative to root: every
// step (creating parents, the temporary file, the rename, the directory
// sync) goes through root, so a symlink cannot redirect the write outside
// it. It is a form of its own, not an option, because its caller holds the
// root (the sandbox's memory dir, an undo's target) and the path alone would
// give that guarantee up.
func WriteFileAtomicIn(root *os.Root, rel string, data []byte, perm os.FileMode, durable bool) error {
	return writeIn(root, rel, perm, writeAll(data), durable)
}

// WriteAtomicInFrom is WriteFileAtomicIn, durable, with the content
// streamed by fill instead of held in memory: restoring a 200 MB file costs
// a buffer, not the file. fill writes the content; an error from it leaves
// rel as it was.
func WriteAtomicInFrom(root *os.Root, rel string, perm os.FileMode, fill func(w io.Writer) error) error {
	return writeIn(root, rel, perm, fill, true)
}

func writeIn(root *os.Root, rel string, perm os.FileMode, fill func(w io.Writer) error, durable bool) error {
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := replace(root, rel, fill, perm, durable); err != nil {
		return err
	}
	if durable {
		return SyncDirIn(root, dir)
	}
	return nil
}

// dirOps is what replace needs of a directory tree: an *os.Root, or the
// plain file system (osDir).
type dirOps interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
}

type osDir struct{}

func (osDir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osDir) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osDir) Remove(name string) error             { return os.Remove(name) }

// writeAll is the fill of a write whose content is in memory.
func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// replace is the one atomic write: a temporary file named with TempPrefix
// beside the target (so that recovery recognises a stray one), filled by
// fill, given perm, fsynced when sync, then renamed over the target.
func replace(d dirOps, rel string, fill func(io.Writer) error, perm os.FileMode, sync bool) error {
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	tmp := filepath.Join(filepath.Dir(rel), TempPrefix+hex.EncodeToString(suffix[:]))
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			d.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", rel, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := d.Rename(tmp, rel); err != nil {
		return fmt.Errorf("replacing %s: %w", rel, err)
	}
	ok = true
	return nil
}

// SyncDirIn is SyncDir for a directory relative to root.
func SyncDirIn(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// RealParents reports whether every existing parent directory of rel inside
// root is a real directory, not a symlink or a file, so that writing rel
// cannot be redirected elsewhere. Missing parents count as real: whoever
// writes rel creates them as directories.
func RealParents(root *os.Root, rel string) bool {
	dir := filepath.Dir(rel)
	if dir == "." {
		return true
	}
	parts := strings.Split(dir, string(filepath.Separator))
	for i := range parts {
		info, err := root.Lstat(filepath.Join(parts[:i+1]...))
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

// ExpandHome replaces a leading "~" path element with home, as a shell
// would have: TOML files and environment values never see that expansion.
func ExpandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// ValidName reports whether name is safe as one path element that dream
// creates itself (a task's or a transaction's id): 1 to maxLen bytes of
// ASCII letters, digits, '-', '_' and '.', not starting with '.' (so never
// "." or "..", and never hidden like dream's temporary files).
func ValidName(name string, maxLen int) bool {
	if name == "" || len(name) > maxLen || name[0] == '.' {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
