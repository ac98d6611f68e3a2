package memory

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
)

// Listing is the names of a memory directory's files, without their bytes:
// what a reader that streams the memory file by file needs first.
type Listing struct {
	// Root is the directory walked: the memory dir, or what it links to.
	Root string
	// Index is set when the directory has a MEMORY.md.
	Index bool
	// Topics are the other Markdown files, relative with forward slashes,
	// sorted.
	Topics []string
	// Other are the non-Markdown files, as in Dir.Other.
	Other []string
	// Links are the Markdown files that are symbolic links, sorted. A
	// dream reads and writes nothing through one: it edits a file by
	// writing a new one and renaming it into place, which would replace
	// the link with a copy and leave its target stale, and a link may
	// lead out of the memory. They are named to the user instead.
	Links []string
}

// List walks a memory directory as Load does (hidden entries, links and
// anything but regular files skipped) and returns the names only, the
// linked Markdown files in Links.
func List(dir string) (Listing, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return Listing{}, fmt.Errorf("memory dir: %w", err)
	}
	if !info.IsDir() {
		return Listing{}, fmt.Errorf("memory dir %s: not a directory", dir)
	}
	// The root itself may be a link (a memory dir symlinked into place):
	// WalkDir would not descend into it, and the memory would look empty.
	root := dir
	if li, err := os.Lstat(dir); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if root, err = filepath.EvalSymlinks(dir); err != nil {
			return Listing{}, fmt.Errorf("memory dir: %w", err)
		}
	}
	l := Listing{Root: root}
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() || !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("memory file %s: %w", p, err)
		}
		rel = filepath.ToSlash(rel)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			if strings.EqualFold(filepath.Ext(name), ".md") {
				l.Links = append(l.Links, rel)
			}
		case !strings.EqualFold(filepath.Ext(name), ".md"):
			l.Other = append(l.Other, rel)
		case rel == IndexFile:
			l.Index = true
		default:
			l.Topics = append(l.Topics, rel)
		}
		return nil
	})
	if err != nil {
		return Listing{}, fmt.Errorf("load memory dir %s: %w", dir, err)
	}
	sort.Strings(l.Topics)
	sort.Strings(l.Other)
	sort.Strings(l.Links)
	return l, nil
}

// Reader reads the files of one memory directory through an os.Root, so
// that no name escapes it, with the sandbox's open (fsutil.OpenRegular): a FIFO or a device put
// in the memory dir is refused instead of blocking the dream or reading
// forever.
type Reader struct{ root *os.Root }

// OpenReader opens dir for reading its files.
func OpenReader(dir string) (*Reader, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("memory dir: %w", err)
	}
	return &Reader{root: r}, nil
}

// ReadFile returns the bytes of rel (slash-separated) and its file info.
func (r *Reader) ReadFile(rel string) ([]byte, fs.FileInfo, error) {
	f, info, err := fsutil.OpenRegular(r.root, filepath.FromSlash(rel), false)
	if err != nil {
		return nil, nil, fmt.Errorf("read memory file %s: %w", rel, err)
	}
	defer f.Close()
	data := make([]byte, 0, info.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read memory file %s: %w", rel, err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	return data, info, nil
}

// Close releases the directory.
func (r *Reader) Close() error { return r.root.Close() }
