package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/dreamkit/dream/internal/trust"
)

// ErrCredential is matched (errors.Is) by every read, stat or open the
// read-only tools attempt on a credential location (~/.ssh, ~/.aws,
// ~/.config/gh, the agents' auth files: trust.CredentialPaths is the one
// list). A repository root of $HOME, which a session started in the home
// directory gives the dream, must not let the model read private keys and
// send them to the provider.
var ErrCredential = errors.New("refused: credentials location")

// credentialGuard knows the credential locations of this user as the file
// system identifies them (device and inode, through os.SameFile), so that a
// symlink to ~/.ssh, a hard link of a key, or a name in another case on a
// case-insensitive file system is refused like the path itself.
type credentialGuard struct {
	infos []fs.FileInfo
	// bases are the lower-cased base names of the locations: a directory
	// entry is only stat'ed when its name is one of them or it is a symlink,
	// so a walk does not pay a stat for every file it lists.
	bases map[string]bool
}

// newCredentialGuard reads the credential locations from this process's
// environment, as the agents that own them do.
func newCredentialGuard() *credentialGuard {
	home, _ := os.UserHomeDir()
	g := &credentialGuard{bases: map[string]bool{}}
	for _, p := range trust.CredentialPaths(os.LookupEnv, home) {
		g.bases[strings.ToLower(filepath.Base(p))] = true
		if fi, err := os.Stat(p); err == nil {
			g.infos = append(g.infos, fi)
			if fi.IsDir() {
				g.addFiles(p)
			}
		}
	}
	return g
}

// maxGuardedFiles bounds how many files inside credential directories are
// remembered one by one (~/.ssh holds a handful; a big ~/.kube cache must
// not make every dream slow to start).
const maxGuardedFiles = 1024

// addFiles remembers the regular files under the credential directory dir,
// so that a hard link of ~/.ssh/id_ed25519 elsewhere in a root, which no
// path comparison can see, is refused on open like the key itself.
func (g *credentialGuard) addFiles(dir string) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if len(g.infos) >= maxGuardedFiles {
			return filepath.SkipAll
		}
		if fi, err := d.Info(); err == nil {
			g.infos = append(g.infos, fi)
		}
		return nil
	})
}

// is reports whether fi is one of the credential locations.
func (g *credentialGuard) is(fi fs.FileInfo) bool {
	for _, c := range g.infos {
		if os.SameFile(fi, c) {
			return true
		}
	}
	return false
}

// rootDenied reports whether the whole root dir is, or lies inside, a
// credential location (a sessions dir of ~/.ssh/x, say). A root that merely
// contains one (the home directory) is allowed; its credential entries are
// refused one by one.
func rootDenied(dir string) bool {
	home, _ := os.UserHomeDir()
	var ce *trust.CredentialDirError
	err := trust.CheckWritableDir("read-only root", dir, os.LookupEnv, home)
	return errors.As(err, &ce) && ce.Relation != "contains"
}

// denied reports whether native (a path relative to o's root, in the
// platform's form) is a credential location or lies inside one. Each
// directory on the way is judged by what it resolves to (a symlinked
// directory too), see dirDenied; the last component is stat'ed afresh.
func (o *openRoot) denied(native string) bool {
	if o.denyAll {
		return true
	}
	if o.guard == nil || len(o.guard.infos) == 0 {
		return false
	}
	native = filepath.Clean(native)
	if native == "." {
		return o.dirDenied(".")
	}
	if o.dirDenied(filepath.Dir(native)) {
		return true
	}
	fi, err := o.root.Stat(native)
	// Not there (or not reachable): nothing to read either; the caller's
	// own open or stat reports it.
	return err == nil && o.guard.is(fi)
}

// parentDenied is denied for the directories above native only: Open
// checks the last component on the descriptor it opened (openedDenied),
// which costs no extra stat and cannot be raced by a rename.
func (o *openRoot) parentDenied(native string) bool {
	if o.denyAll {
		return true
	}
	if o.guard == nil || len(o.guard.infos) == 0 {
		return false
	}
	return o.dirDenied(filepath.Dir(filepath.Clean(native)))
}

// openedDenied reports whether an opened file (its fstat) is a credential
// location: the key itself, or a hard link of it.
func (o *openRoot) openedDenied(fi fs.FileInfo) bool {
	return o.guard != nil && o.guard.is(fi)
}

// dirDenied reports whether the directory dir (relative to the root) is,
// or lies inside, a credential location. Answers are cached per root for
// the dream, so a grep over a thousand files stats each directory once
// rather than every ancestor of every file (a 2x slowdown, measured by
// BenchmarkGrepCredentialGuard); what a directory swapped for a symlink
// mid-dream could reach is still refused by the fstat check on each key
// opened (openedDenied), the guard knowing the files of every credential
// directory by identity.
func (o *openRoot) dirDenied(dir string) bool {
	o.mu.Lock()
	v, ok := o.dirCache[dir]
	o.mu.Unlock()
	if ok {
		return v
	}
	if dir != "." && o.dirDenied(filepath.Dir(dir)) {
		v = true
	} else {
		fi, err := o.root.Stat(dir)
		v = err == nil && o.guard.is(fi)
	}
	o.mu.Lock()
	if o.dirCache == nil {
		o.dirCache = map[string]bool{}
	}
	o.dirCache[dir] = v
	o.mu.Unlock()
	return v
}

// deniedEntry reports whether the entry name of directory dir (slash path
// under the root, already checked) is a credential location.
func (o *openRoot) deniedEntry(dir string, e fs.DirEntry) bool {
	if o.guard == nil || len(o.guard.infos) == 0 {
		return false
	}
	if !o.guard.bases[strings.ToLower(e.Name())] && e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := o.root.Stat(filepath.Join(filepath.FromSlash(dir), e.Name()))
	return err == nil && o.guard.is(fi)
}

// skipCounter counts the credential entries one FS hid from listings.
type skipCounter struct{ n atomic.Int64 }

// CredentialsSkipped returns how many directory entries fsys (from
// ReadOnly.FS) has left out of its listings because they are credential
// locations, so that glob, grep and ls can say so. It is 0 for any other
// fs.FS.
func CredentialsSkipped(fsys fs.FS) int {
	if r, ok := fsys.(regularFS); ok && r.skipped != nil {
		return int(r.skipped.n.Load())
	}
	return 0
}
