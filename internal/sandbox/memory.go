package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/fsutil"
)

// Memory is read-write access to one memory directory. The directory the
// model sees (the display directory, e.g. the user's real memory dir) may
// differ from the one written (a staging copy kept by the journal); absolute
// paths under either map onto the same root.
type Memory struct {
	root       *os.Root
	displayDir string
	prefixes   []string // display aliases first, then real-dir aliases
}

// OpenMemory opens realDir for confined writing. displayDir is the path the
// model is told about; an empty displayDir means realDir itself.
func OpenMemory(realDir, displayDir string) (*Memory, error) {
	if realDir == "" {
		return nil, errors.New("open memory directory: empty path")
	}
	if displayDir == "" {
		displayDir = realDir
	}
	disp, err := aliases(displayDir)
	if err != nil {
		return nil, fmt.Errorf("open memory directory: %w", err)
	}
	real, err := aliases(realDir)
	if err != nil {
		return nil, fmt.Errorf("open memory directory: %w", err)
	}
	root, err := os.OpenRoot(realDir)
	if err != nil {
		return nil, fmt.Errorf("open memory directory %s: %w", realDir, err)
	}
	return &Memory{root: root, displayDir: disp[0], prefixes: append(disp, real...)}, nil
}

// DisplayDir is the memory directory as the model sees it.
func (m *Memory) DisplayDir() string { return m.displayDir }

// Display returns the absolute path the model knows rel by.
func (m *Memory) Display(rel string) string {
	return filepath.Join(m.displayDir, filepath.FromSlash(rel))
}

// Resolve maps a model-supplied path (absolute under the display or real
// directory, or relative to the memory directory) to a clean slash-separated
// path relative to the memory directory. It refuses anything outside, the
// directory itself, the lock file and .git; the error says what is allowed so
// the model can correct the call.
func (m *Memory) Resolve(filePath string) (string, error) {
	abs, err := absUnder(m.displayDir, filePath)
	if err != nil {
		return "", fmt.Errorf("file_path: %w", err)
	}
	// The longest matching prefix wins, so that a real directory nested in
	// the display one (or the reverse) still maps each path onto one file.
	best, found := "", -1
	for _, dir := range m.prefixes {
		if rel, ok := within(dir, abs); ok && len(dir) > found {
			best, found = rel, len(dir)
		}
	}
	if found >= 0 {
		rel := filepath.ToSlash(best)
		if err := checkMemoryRel(rel); err != nil {
			return "", err
		}
		if err := CheckName(rel); err != nil {
			return "", err
		}
		return rel, nil
	}
	return "", fmt.Errorf("%w: only files inside the memory directory %s may be written (absolute, or relative to it); got %q",
		ErrOutside, m.displayDir, filePath)
}

// ReadFile reads a memory file. rel is re-checked: callers may hold a path
// that was validated earlier, and this is where the check must hold.
func (m *Memory) ReadFile(rel string) ([]byte, error) {
	if err := checkMemoryRel(rel); err != nil {
		return nil, err
	}
	// A FIFO or device named like a memory file must be a clear error, not
	// a read that blocks until the dream's deadline.
	f, _, err := openRegular(m.root, filepath.FromSlash(rel), false)
	if err != nil {
		return nil, fmt.Errorf("read memory file %s: %w", rel, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read memory file %s: %w", rel, err)
	}
	return data, nil
}

// Stat follows symbolic links inside the root, like os.Stat.
func (m *Memory) Stat(rel string) (fs.FileInfo, error) {
	if err := checkMemoryRel(rel); err != nil {
		return nil, err
	}
	fi, err := m.root.Stat(filepath.FromSlash(rel))
	if err != nil {
		return nil, fmt.Errorf("stat memory file %s: %w", rel, err)
	}
	return fi, nil
}

// WriteFile replaces (or creates) a memory file atomically: the data goes to
// a temporary file in the same directory, is synced, and is renamed over the
// target, so a crash leaves either the old file or the new one and never a
// truncated mix. Missing parent directories are created. An existing file
// keeps its permission bits. A symbolic link as the target is refused rather
// than silently replaced by a regular file.
func (m *Memory) WriteFile(rel string, data []byte) error {
	if err := checkMemoryRel(rel); err != nil {
		return err
	}
	if err := CheckName(rel); err != nil {
		return err
	}
	name := filepath.FromSlash(rel)
	perm := fs.FileMode(0o644)
	switch fi, err := m.root.Lstat(name); {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link; write the file it points to instead", ErrForbidden, rel)
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a directory, not a file; write to a file inside it or choose another name", rel)
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is a %s, not a memory file; choose another name", ErrNotRegular, rel, kindOf(fi.Mode()))
	case err == nil:
		perm = fi.Mode().Perm()
	case !isNotExist(err):
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	if err := fsutil.WriteFileAtomicIn(m.root, name, data, perm, true); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// Close releases the root.
func (m *Memory) Close() error {
	if err := m.root.Close(); err != nil {
		return fmt.Errorf("close memory directory: %w", err)
	}
	return nil
}
