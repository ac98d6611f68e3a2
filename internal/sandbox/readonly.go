package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// NamedRoot is one directory the read-only tools may look into. RealDir is
// what is opened; DisplayDir is how the model knows it (empty means RealDir).
type NamedRoot struct {
	Name       string
	RealDir    string
	DisplayDir string
}

// Display returns the absolute path the model knows rel under r by.
func (r NamedRoot) Display(rel string) string {
	return filepath.Join(r.DisplayDir, filepath.FromSlash(rel))
}

type openRoot struct {
	NamedRoot
	root     *os.Root
	prefixes []string
	// staged is set when RealDir is not DisplayDir: the root is a copy that
	// stands in for the directory the model knows (the journal's staging
	// copy of the memory dir), so it must shadow any other root opened on
	// that same directory.
	staged bool
	// guard refuses the credential locations inside the root; denyAll is
	// set when the root itself is, or is inside, one.
	guard   *credentialGuard
	denyAll bool
	// mu guards dirCache, dirDenied's answers.
	mu       sync.Mutex
	dirCache map[string]bool
}

// ReadOnly is read access to a named set of roots (the repository, the memory
// directory, the sessions directory). It has no method that writes.
type ReadOnly struct {
	roots []*openRoot
}

// OpenReadOnly opens the given roots in order; the first one that exists is
// where relative paths are resolved. Roots whose directory does not exist (a
// host without a sessions directory, say) are skipped rather than failing the
// dream; other errors are returned.
func OpenReadOnly(roots ...NamedRoot) (*ReadOnly, error) {
	r := &ReadOnly{}
	guard := newCredentialGuard()
	for _, nr := range roots {
		if nr.RealDir == "" {
			continue
		}
		if nr.DisplayDir == "" {
			nr.DisplayDir = nr.RealDir
		}
		root, err := os.OpenRoot(nr.RealDir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("open %s directory %s: %w", nr.Name, nr.RealDir, err)
		}
		disp, err := aliases(nr.DisplayDir)
		staged := false
		if err == nil {
			var real []string
			real, err = aliases(nr.RealDir)
			if err == nil {
				staged = real[0] != disp[0]
			}
			disp = append(disp, real...)
		}
		if err != nil {
			_ = root.Close()
			_ = r.Close()
			return nil, fmt.Errorf("open %s directory: %w", nr.Name, err)
		}
		nr.DisplayDir = disp[0]
		r.roots = append(r.roots, &openRoot{NamedRoot: nr, root: root, prefixes: disp, staged: staged, guard: guard, denyAll: rootDenied(nr.RealDir)})
	}
	return r, nil
}

// Roots lists the roots that were opened, in order.
func (r *ReadOnly) Roots() []NamedRoot {
	out := make([]NamedRoot, len(r.roots))
	for i, o := range r.roots {
		out[i] = o.NamedRoot
	}
	return out
}

// Root returns the opened root with the given name.
func (r *ReadOnly) Root(name string) (NamedRoot, bool) {
	o := r.find(name)
	if o == nil {
		return NamedRoot{}, false
	}
	return o.NamedRoot, true
}

// Resolve maps a model-supplied path to a root and a clean slash-separated
// path relative to it ("." for the root itself). Absolute paths may be under
// any root's display or real directory; relative paths are taken from the
// first root. When roots nest (a memory directory inside the repository), the
// innermost wins, so a memory file is always read from the memory root; when
// two roots are the same directory (the repository is the memory dir), a
// staged root (one whose RealDir is not its DisplayDir) wins, so that reads
// see the dream's own writes rather than the live files behind them, and
// otherwise the later root wins (memory is opened after the repository).
func (r *ReadOnly) Resolve(filePath string) (NamedRoot, string, error) {
	if len(r.roots) == 0 {
		return NamedRoot{}, "", errors.New("no readable directory is configured")
	}
	abs, err := absUnder(r.roots[0].DisplayDir, filePath)
	if err != nil {
		return NamedRoot{}, "", fmt.Errorf("path: %w", err)
	}
	var best *openRoot
	bestLen, bestRel := -1, ""
	for _, o := range r.roots {
		for _, dir := range o.prefixes {
			rel, ok := within(dir, abs)
			if !ok {
				continue
			}
			if len(dir) > bestLen || len(dir) == bestLen && (o.staged || !best.staged) {
				best, bestLen, bestRel = o, len(dir), rel
			}
		}
	}
	if best == nil {
		return NamedRoot{}, "", fmt.Errorf("%w: path must be inside %s; got %q", ErrOutside, r.describe(), filePath)
	}
	return best.NamedRoot, filepath.ToSlash(bestRel), nil
}

// describe lists the roots for error messages.
func (r *ReadOnly) describe() string {
	parts := make([]string, len(r.roots))
	for i, o := range r.roots {
		parts[i] = fmt.Sprintf("the %s directory %s", o.Name, o.DisplayDir)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func (r *ReadOnly) find(name string) *openRoot {
	for _, o := range r.roots {
		if o.Name == name {
			return o
		}
	}
	return nil
}

func (r *ReadOnly) lookup(root NamedRoot, rel string) (*openRoot, string, error) {
	o := r.find(root.Name)
	if o == nil {
		return nil, "", fmt.Errorf("no %s directory is open", root.Name)
	}
	native := filepath.FromSlash(rel)
	if rel == "" {
		native = "."
	}
	if !filepath.IsLocal(native) && native != "." {
		return nil, "", fmt.Errorf("%w: %q is not inside the %s directory", ErrOutside, rel, root.Name)
	}
	return o, native, nil
}

// Open opens the regular file rel under root for reading. It never blocks
// in open(2) and refuses FIFOs, sockets, devices and directories with
// ErrNotRegular (see openRegular), so a FIFO planted in a repository or a
// sessions dir cannot hang a dream.
func (r *ReadOnly) Open(root NamedRoot, rel string) (*os.File, error) {
	o, native, err := r.lookup(root, rel)
	if err != nil {
		return nil, err
	}
	if o.parentDenied(native) {
		return nil, fmt.Errorf("open %s: %w", o.Display(rel), ErrCredential)
	}
	f, fi, err := openRegular(o.root, native, false)
	if errors.Is(err, ErrNotRegular) && o.denied(native) {
		// ~/.ssh itself: say why it is off limits, not that it is a
		// directory.
		err = ErrCredential
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", o.Display(rel), err)
	}
	if o.openedDenied(fi) {
		_ = f.Close()
		return nil, fmt.Errorf("open %s: %w", o.Display(rel), ErrCredential)
	}
	return f, nil
}

// Stat follows symbolic links inside the root.
func (r *ReadOnly) Stat(root NamedRoot, rel string) (fs.FileInfo, error) {
	o, native, err := r.lookup(root, rel)
	if err != nil {
		return nil, err
	}
	if o.denied(native) {
		return nil, fmt.Errorf("stat %s: %w", o.Display(rel), ErrCredential)
	}
	fi, err := o.root.Stat(native)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", o.Display(rel), err)
	}
	return fi, nil
}

// FS returns the root as a confined fs.FS, for walking and globbing. Its
// Open, like Open above, never blocks and yields only regular files and
// directories; it refuses credential locations with ErrCredential, and its
// ReadDir leaves them out (CredentialsSkipped counts them), so no walk ever
// descends into one.
func (r *ReadOnly) FS(root NamedRoot) (fs.FS, error) {
	o := r.find(root.Name)
	if o == nil {
		return nil, fmt.Errorf("no %s directory is open", root.Name)
	}
	return regularFS{root: o.root, guard: o, skipped: &skipCounter{}}, nil
}

// Close releases every root.
func (r *ReadOnly) Close() error {
	var errs []error
	for _, o := range r.roots {
		if err := o.root.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s directory: %w", o.Name, err))
		}
	}
	r.roots = nil
	return errors.Join(errs...)
}
