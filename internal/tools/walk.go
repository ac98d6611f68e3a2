package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// walkFunc receives each file found: its slash path relative to the root and
// its directory entry.
type walkFunc func(rel string, d fs.DirEntry) error

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// ignoreFile is one .gitignore and the directory it governs.
type ignoreFile struct {
	dir string // slash path relative to the root, "." for the root
	gi  *ignore.GitIgnore
}

// gitignores is the set of .gitignore files met so far in a walk.
type gitignores struct {
	fsys  fs.FS
	files []ignoreFile
}

// load reads dir/.gitignore if there is one. Read errors are ignored: a
// .gitignore that cannot be read only means more files are listed.
func (g *gitignores) load(dir string) {
	data, err := fs.ReadFile(g.fsys, path.Join(dir, ".gitignore"))
	if err != nil {
		return
	}
	g.files = append(g.files, ignoreFile{dir: dir, gi: ignore.CompileIgnoreLines(strings.Split(string(data), "\n")...)})
}

// ignored reports whether rel is excluded by a .gitignore in one of its
// ancestors. Directories are matched with a trailing slash so that patterns
// such as "build/" apply to them.
func (g *gitignores) ignored(rel string, isDir bool) bool {
	for _, f := range g.files {
		sub, ok := relTo(f.dir, rel)
		if !ok {
			continue
		}
		if isDir {
			sub += "/"
		}
		if f.gi.MatchesPath(sub) {
			return true
		}
	}
	return false
}

// relTo returns rel relative to dir when rel is strictly below dir.
func relTo(dir, rel string) (string, bool) {
	if dir == "." {
		return rel, rel != "."
	}
	if strings.HasPrefix(rel, dir+"/") {
		return rel[len(dir)+1:], true
	}
	return "", false
}

// walkTree calls fn for every regular file under start (a slash path relative
// to the root of fsys; "." for the root), in lexical order. It never descends
// into .git, does not follow symbolic links, and when useGitignore is set
// skips what the .gitignore files of start's ancestors and of the walked
// directories exclude. start itself is never skipped: a directory the model
// names explicitly is searched even if ignored (then only the .gitignore
// files inside it apply). fn may return errStopWalk.
func walkTree(ctx context.Context, fsys fs.FS, start string, useGitignore bool, fn walkFunc) error {
	g := &gitignores{fsys: fsys}
	if useGitignore {
		// Ancestors of start first, so that the root's rules apply to a walk
		// of a subdirectory.
		if start != "." {
			dir := "."
			g.load(dir)
			parts := strings.Split(start, "/")
			for _, p := range parts[:len(parts)-1] {
				dir = path.Join(dir, p)
				g.load(dir)
			}
			// An ignored directory named explicitly is searched as asked:
			// the rules that ignore it must not hide everything inside it.
			if g.ignored(start, true) {
				g.files = nil
			}
		}
	}
	err := fs.WalkDir(fsys, start, func(rel string, d fs.DirEntry, err error) error {
		// Every entry, not every few hundred: one entry can be a slow
		// network directory, and the dream's deadline must hold.
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if rel == start {
				return fmt.Errorf("walk %s: %w", rel, err)
			}
			// An unreadable subdirectory is skipped, not fatal.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if rel != start && (strings.EqualFold(d.Name(), ".git") || useGitignore && g.ignored(rel, true)) {
				return fs.SkipDir
			}
			if useGitignore {
				g.load(rel)
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if rel != start && useGitignore && g.ignored(rel, false) {
			return nil
		}
		return fn(rel, d)
	})
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}
