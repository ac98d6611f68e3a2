package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTooLong reports a memory path the file system cannot hold: a name
// longer than its NAME_MAX, or a whole path longer than PATH_MAX.
var ErrTooLong = errors.New("path too long for the file system")

// tempNameMax is the longest temporary name dream puts beside a memory file
// before renaming it into place (fsutil's atomic write and the journal's
// commit name it .dream-tmp- and 16 or 21 more bytes): the path of that temporary
// file must fit too, or the write fails when it lands.
const tempNameMax = 64

// CheckFits refuses a memory path the file systems of the memory dir (and
// of the staging copy written during a dream) cannot hold. os.Root creates
// a path one directory at a time, so a 4,000-byte path can be created in
// the staging copy and then fail with ENAMETOOLONG when the commit names it
// whole, losing the dream's other edits with it: the check is made at the
// call instead, with limits read from the file systems themselves.
func (m *Memory) CheckFits(rel string) error {
	nameMax, pathMax := fsLimits(m.prefixes)
	parts := strings.Split(rel, "/")
	for _, part := range parts {
		if len(part) > nameMax {
			return fmt.Errorf("%w: the name %.40q… is %d bytes; this file system allows at most %d bytes per name: choose a short name such as topic-name.md",
				ErrTooLong, part, len(part), nameMax)
		}
	}
	// The longest path written for rel: rel itself, or the temporary file
	// beside it when its name is shorter than tempNameMax.
	longest := max(len(rel), len(rel)-len(parts[len(parts)-1])+tempNameMax)
	rootLen := 0
	for _, root := range m.prefixes {
		rootLen = max(rootLen, len(root))
	}
	// PATH_MAX counts the terminating NUL; the root is followed by a slash.
	if room := pathMax - 1 - rootLen - 1; longest > room {
		return fmt.Errorf("%w: the path is %d bytes long below the memory directory, and this file system holds at most %d bytes below %s: use fewer, shorter directory and file names",
			ErrTooLong, len(rel), room-(longest-len(rel)), m.displayDir)
	}
	return nil
}
