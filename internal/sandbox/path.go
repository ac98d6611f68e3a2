package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/lock"
)

// LockFileName is the consolidation lock at the top of the memory directory.
// It is shared with the agents dream works beside, so a dream must never
// write it through its tools: that would corrupt the lock protocol.
const LockFileName = lock.FileName

// ErrOutside reports a path that leaves the directories a tool may touch.
var ErrOutside = errors.New("path outside the allowed directories")

// ErrForbidden reports a path inside the memory directory that is still
// off-limits: the consolidation lock or anything under .git.
var ErrForbidden = errors.New("path is off-limits")

// aliases returns the spellings under which dir may appear in a path the model
// gives: as configured (made absolute and clean) and with symbolic links
// resolved, so that e.g. a temp dir reached through a symlinked /tmp still
// matches. Duplicates are dropped.
func aliases(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("make %q absolute: %w", dir, err)
	}
	out := []string{filepath.Clean(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != out[0] {
		out = append(out, filepath.Clean(real))
	}
	return out, nil
}

// within reports whether the clean absolute path p is dir or lies below it,
// and returns p relative to dir. Comparing whole components (dir plus a
// separator) is what defeats the sibling-prefix trick: "/x/memory-evil" is not
// inside "/x/memory".
func within(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return p[len(prefix):], true
}

// absUnder turns filePath into a clean absolute path: absolute paths are
// cleaned, relative ones are joined to base. It refuses empty paths and NUL
// bytes, which no file system accepts and which would only confuse a later
// check.
func absUnder(base, filePath string) (string, error) {
	if strings.TrimSpace(filePath) == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(filePath, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if filepath.IsAbs(filePath) {
		return filepath.Clean(filePath), nil
	}
	return filepath.Join(base, filePath), nil
}

// checkMemoryRel enforces the rules that hold for every memory path on top of
// staying inside the directory: the lock file is refused under any letter case
// (case-insensitive file systems would map ".Consolidate-Lock" onto it) and at
// any depth, and nothing under a .git directory may be written.
func checkMemoryRel(rel string) error {
	if rel == "" || rel == "." {
		return fmt.Errorf("%w: the memory directory itself is not a file", ErrForbidden)
	}
	native := filepath.FromSlash(rel)
	if !filepath.IsLocal(native) {
		return fmt.Errorf("%w: %q is not a path inside the memory directory", ErrOutside, rel)
	}
	for _, part := range strings.Split(filepath.ToSlash(native), "/") {
		if strings.EqualFold(part, LockFileName) {
			return fmt.Errorf("%w: the consolidation lock file %s is managed by dream and may not be touched", ErrForbidden, LockFileName)
		}
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("%w: files under .git may not be touched; write memory files only", ErrForbidden)
		}
	}
	return nil
}

// isNotExist is errors.Is(err, os.ErrNotExist), named for readability at
// call sites that treat a missing file as an empty one.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
