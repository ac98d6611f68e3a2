// Package trust decides what an outside file may make dream do.
//
// A project's .dream.toml arrives with every repository the user clones, so
// it is untrusted input, as a repository's config is for git
// (safe.directory), direnv and mise (allow / trust) and Claude Code (which
// never reads its memory-directory setting from project settings). Until
// the user has read a project file and allowed its exact content with
// `dream trust`, it may only tune harmless keys; the settings package
// refuses the rest. Store records that allowance: a file's canonical path
// and the SHA-256 of its content, in the user's own state directory, so any
// change to the file (one byte) drops the trust.
//
// Independently of any trust, CheckWritableDir refuses to let dream write
// into a directory that holds credentials (~/.ssh, ~/.aws, the agents' own
// auth files ...), whatever a host layout, a flag or a file says.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// FileName is the store's file inside the user's dream state directory.
const FileName = "trusted-projects.json"

// maxStoreSize bounds the store file read; a real one is a few KB.
const maxStoreSize = 4 << 20

// Entry is one trusted project file.
type Entry struct {
	// Path is the file's absolute path with symlinks resolved.
	Path string `json:"path"`
	// SHA256 is the hex digest of the exact content the user allowed.
	SHA256 string `json:"sha256"`
	// TrustedAt is when the user allowed it.
	TrustedAt time.Time `json:"trusted_at"`
}

// storeFile is the JSON document on disk.
type storeFile struct {
	Version int     `json:"version"`
	Files   []Entry `json:"files"`
}

// Store is the record of trusted project files at one path.
type Store struct {
	path string
	now  func() time.Time
}

// DefaultPath is the store of this user: FileName in dream's default state
// dir, settings.StateDir ($XDG_STATE_HOME/dream, falling back to
// ~/.local/state/dream). It deliberately ignores the state_dir setting and
// --state-dir: a trusted project file may set state_dir, so the record of
// trust must not move with it. "" when defaultStateDir is "".
func DefaultPath(defaultStateDir string) string {
	if defaultStateDir == "" {
		return ""
	}
	return filepath.Join(defaultStateDir, FileName)
}

// Open returns the store at path; the file is created on the first Add.
func Open(path string) *Store { return &Store{path: path, now: time.Now} }

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Canonical is the form a project file is recorded under: absolute, clean,
// symlinks resolved, so that one file reached two ways is one entry and a
// symlink swapped to another file is another.
func Canonical(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("trust: %w", err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("trust: %w", err)
	}
	return resolved, nil
}

// Digest is the hex SHA-256 of content, as recorded.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Trusted reports whether the user allowed exactly content at file. It
// takes the content the caller already read (and will parse), so the bytes
// judged are the bytes used. Any failure (no store, a corrupt store, a path
// that does not resolve) is "not trusted".
func (s *Store) Trusted(file string, content []byte) bool {
	if s == nil || s.path == "" {
		return false
	}
	p, err := Canonical(file)
	if err != nil {
		return false
	}
	doc, err := s.read()
	if err != nil {
		return false
	}
	digest := Digest(content)
	for _, e := range doc.Files {
		if e.Path == p && e.SHA256 == digest {
			return true
		}
	}
	return false
}

// Add trusts file's current content, replacing any earlier entry for it.
func (s *Store) Add(file string) (Entry, error) {
	p, err := Canonical(file)
	if err != nil {
		return Entry{}, err
	}
	content, err := readRegular(p)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Path: p, SHA256: Digest(content), TrustedAt: s.now().UTC().Truncate(time.Second)}
	err = s.update(func(doc *storeFile) {
		doc.Files = removePath(doc.Files, p)
		doc.Files = append(doc.Files, e)
	})
	return e, err
}

// Remove drops any trust in file; removed says whether there was some. A
// file that no longer exists is matched by its absolute path.
func (s *Store) Remove(file string) (removed bool, err error) {
	p, err := Canonical(file)
	if err != nil {
		if p, err = filepath.Abs(file); err != nil {
			return false, fmt.Errorf("trust: %w", err)
		}
	}
	err = s.update(func(doc *storeFile) {
		n := len(doc.Files)
		doc.Files = removePath(doc.Files, p)
		removed = len(doc.Files) != n
	})
	return removed, err
}

// List returns the trusted files, sorted by path.
func (s *Store) List() ([]Entry, error) {
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	out := append([]Entry(nil), doc.Files...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func removePath(es []Entry, p string) []Entry {
	out := es[:0]
	for _, e := range es {
		if e.Path != p {
			out = append(out, e)
		}
	}
	return out
}

// read loads the store; a missing file is an empty store.
func (s *Store) read() (storeFile, error) {
	if s.path == "" {
		return storeFile{}, errors.New("trust: no state directory for the trust store")
	}
	b, err := readRegular(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return storeFile{Version: 1}, nil
	}
	if err != nil {
		return storeFile{}, err
	}
	var doc storeFile
	if err := json.Unmarshal(b, &doc); err != nil {
		return storeFile{}, fmt.Errorf("trust: %s is corrupt (%v): remove it and trust the projects again", s.path, err)
	}
	return doc, nil
}

// update applies change to the store under an exclusive lock, so that two
// `dream trust` at once both land, and writes it atomically.
func (s *Store) update(change func(*storeFile)) error {
	if s.path == "" {
		return errors.New("trust: no state directory for the trust store")
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return fmt.Errorf("trust: locking the store: %w", err)
	}
	defer unlock()
	doc, err := s.read()
	if err != nil {
		return err
	}
	change(&doc)
	doc.Version = 1
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	if err := fsutil.WriteFileAtomic(s.path, append(b, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("trust: writing the store: %w", err)
	}
	return nil
}

// readRegular reads a regular file of bounded size, refusing anything else
// (a FIFO would block, a directory or a huge file is a mistake).
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("trust: %s is not a regular file", path)
	}
	if fi.Size() > maxStoreSize {
		return nil, fmt.Errorf("trust: %s is larger than %d bytes", path, maxStoreSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	return b, nil
}
