package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// OpaqueSize is the size above which a memory file is opaque: staged by
// reference, never loaded whole (hashed and copied as a stream), counted
// and shown as binary in diffs. A memory is text an agent reads; a file this
// large is a pasted log or an attachment, and loading it would make a
// dream's memory grow with it.
const OpaqueSize = 8 << 20

// fingerprint identifies one version of a file. SHA256 may be empty for a
// file staged by link whose content was never needed; the stat fields
// (inode, mtime and ctime in nanoseconds) then say whether it is still the
// version the dream started from, as git's index does, without reading it.
type fingerprint struct {
	Size    int64       `json:"size"`
	SHA256  string      `json:"sha256,omitempty"`
	Mode    os.FileMode `json:"mode"`
	Ino     uint64      `json:"ino,omitempty"`
	MtimeNs int64       `json:"mtime_ns,omitempty"`
	CtimeNs int64       `json:"ctime_ns,omitempty"`
}

func (f fingerprint) same(o fingerprint) bool {
	if f.SHA256 == "" || o.SHA256 == "" {
		return f.sameStat(o)
	}
	return f.Size == o.Size && f.SHA256 == o.SHA256
}

// sameStat reports whether two fingerprints describe the same inode
// unchanged; false when either has no stat.
func (f fingerprint) sameStat(o fingerprint) bool {
	return f.Ino != 0 && f.Ino == o.Ino && f.Size == o.Size && f.MtimeNs == o.MtimeNs && f.CtimeNs == o.CtimeNs
}

// sameOriginal reports whether an original file (cur) is still its base
// version by stat. In a linked staging the dream's own replacement of a
// staged link changes the original inode's link count and so its ctime;
// there the inode, size and mtime decide.
func (t *Txn) sameOriginal(cur, base fingerprint) bool {
	if t.rec.Linked {
		return base.Ino != 0 && cur.Ino == base.Ino && cur.Size == base.Size && cur.MtimeNs == base.MtimeNs
	}
	return cur.sameStat(base)
}

// statPrint is the fingerprint of info without its hash.
func statPrint(info fs.FileInfo) fingerprint {
	fp := fingerprint{Size: info.Size(), Mode: info.Mode().Perm(), MtimeNs: info.ModTime().UnixNano()}
	if ino, ctime, ok := identity(info); ok {
		fp.Ino, fp.CtimeNs = ino, ctime
	}
	return fp
}

// walkFiles calls fn for every regular memory file under root, with its
// slash path relative to root, in lexical order. Ignored names and
// non-regular files (symlinks, devices) are skipped: they are not memory.
func walkFiles(root string, fn func(rel, abs string, info fs.FileInfo) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if Ignored(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), p, info)
	})
}

// fingerprintFile hashes one file.
func fingerprintFile(path string) (fingerprint, error) {
	fp, _, err := hashFile(path)
	return fp, err
}

// hashFile is fingerprintFile that also returns the file's stat as it was
// when it was opened: a later stat equal to it (inode, size, mtime, ctime)
// proves the content is still the one hashed.
func hashFile(path string) (fp, stat fingerprint, err error) {
	f, err := os.Open(path)
	if err != nil {
		return fingerprint{}, fingerprint{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fingerprint{}, fingerprint{}, err
	}
	h := sha256.New()
	n, err := copyStream(h, f)
	if err != nil {
		return fingerprint{}, fingerprint{}, fmt.Errorf("hash %s: %w", path, err)
	}
	return fingerprint{Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), Mode: info.Mode().Perm()}, statPrint(info), nil
}

// stageTree fills dst with every memory file of src and returns, per file,
// the fingerprint of the original (base) and of what was staged. With link,
// each file is staged as a hard link to the original: nothing is read or
// copied, so staging costs one link per file whatever the sizes, and a
// writer that replaces files (temp file and rename, as every writer in dream
// does) materialises only what it writes. Without link, or where a link is
// impossible (another file system), the file is copied and hashed in one
// streamed pass.
func stageTree(src, dst string, link bool) (base, staged map[string]fingerprint, err error) {
	base, staged = map[string]fingerprint{}, map[string]fingerprint{}
	n := 0
	made := map[string]bool{dst: true} // directories known to exist in staging
	err = walkFiles(src, func(rel, abs string, info fs.FileInfo) error {
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if dir := filepath.Dir(target); !made[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			made[dir] = true
		}
		if link && os.Link(abs, target) == nil {
			// One stat per file, the walk's: the link changes the inode's
			// ctime, but in a linked staging an unwritten file is told by
			// its inode (it is still the original's) and the original by
			// inode, size and mtime, so no staged stat is recorded.
			base[rel] = statPrint(info)
		} else {
			fp, err := copyHashed(abs, target, info.Mode().Perm())
			if err != nil {
				return err
			}
			// Keep the modification time: it is when the memory was
			// written, which the offline engine uses to resolve "yesterday".
			if err := os.Chtimes(target, info.ModTime(), info.ModTime()); err != nil {
				return err
			}
			si, err := os.Lstat(target)
			if err != nil {
				return err
			}
			b := statPrint(info)
			b.SHA256 = fp.SHA256
			st := statPrint(si)
			st.SHA256 = fp.SHA256
			base[rel], staged[rel] = b, st
		}
		n++
		crashPoint("begin:copied:%d", n)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("stage %s: %w", src, err)
	}
	if err := copySymlinks(src, dst); err != nil {
		return nil, nil, fmt.Errorf("stage %s: %w", src, err)
	}
	return base, staged, nil
}

// copySymlinks recreates the memory dir's symlinks in staging, as links
// with the same targets. They are not memory (no change is ever recorded for
// them), but without them a model could create a real directory in staging
// where the memory dir has a symlink to elsewhere, and the commit would then
// write through that link. With them, the sandbox's os.Root on the staging
// dir refuses a path through any link that leaves it, at the tool call.
func copySymlinks(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == src {
			return nil
		}
		if Ignored(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		link := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		return os.Symlink(target, link)
	})
}

func copyHashed(src, dst string, perm os.FileMode) (fingerprint, error) {
	in, err := os.Open(src)
	if err != nil {
		return fingerprint{}, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o200)
	if err != nil {
		return fingerprint{}, err
	}
	h := sha256.New()
	n, err := copyStream(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fingerprint{}, fmt.Errorf("copy %s: %w", src, err)
	}
	return fingerprint{Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), Mode: perm}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
