package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/sandbox"
)

// resolveRead maps read's file_path to a root and a slash path in it. An
// absolute path is read from whichever root holds it. A relative one names
// a memory file first, since the model's work is memory ("read MEMORY.md"
// and the edit of MEMORY.md that follows must name one file), and a
// repository file of that path when the memory has none; a repository file
// that shares a memory file's name is read by its absolute path. When
// neither exists the error names the file the model probably meant.
func (s *Set) resolveRead(filePath string) (sandbox.NamedRoot, string, error) {
	if filepath.IsAbs(filePath) || strings.TrimSpace(filePath) == "" || strings.ContainsRune(filePath, 0) {
		return s.ro.Resolve(filePath)
	}
	var first error
	for _, name := range []string{RootMemory, RootRepo} {
		r, ok := s.ro.Root(name)
		if !ok {
			continue
		}
		root, rel, err := s.ro.Resolve(filepath.Join(r.DisplayDir, filePath))
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		// A file that exists, or one that cannot be looked at (the
		// read says why), is the one meant.
		if _, err := s.ro.Stat(root, rel); err == nil || !isNotExist(err) {
			return root, rel, nil
		}
	}
	if first != nil && errors.Is(first, sandbox.ErrOutside) {
		return sandbox.NamedRoot{}, "", first
	}
	return sandbox.NamedRoot{}, "", s.notFound(filePath, true)
}

// notFound says that the relative path rel names no file, and which file
// the model probably meant: a memory file (or, for read, a repository file
// beside where it looked) of the same name in another letter case or
// directory.
func (s *Set) notFound(rel string, repoToo bool) error {
	where := "in the memory directory " + s.mem.DisplayDir()
	if r, ok := s.ro.Root(RootRepo); ok && repoToo {
		where += " nor in the repository " + r.DisplayDir
	}
	msg := fmt.Sprintf("no file %s %s (a relative path names a memory file, then a repository file)", sandbox.SafeName(rel), where)
	if guess := s.guess(rel, repoToo); guess != "" {
		msg += "; did you mean " + sandbox.SafeName(guess) + "?"
	} else {
		msg += "; ls or glob shows what there is"
	}
	return errors.New(msg)
}

// maxGuessFiles bounds the memory files a guess looks at: a wrong path is
// answered at once, however large the memory.
const maxGuessFiles = 20000

// guess is the display path of the file rel most likely meant: the same
// base name, letter case aside, in the memory (any directory) or, with
// repoToo, in the repository directory rel names. "" when none.
func (s *Set) guess(rel string, repoToo bool) string {
	want := strings.ToLower(path.Base(filepath.ToSlash(rel)))
	var found []string
	if root, ok := s.ro.Root(RootMemory); ok {
		if fsys, err := s.ro.FS(root); err == nil {
			n := 0
			_ = walkTree(context.Background(), fsys, ".", false, func(p string, _ fs.DirEntry) error {
				if n++; n > maxGuessFiles {
					return errStopWalk
				}
				if strings.ToLower(path.Base(p)) == want {
					found = append(found, root.Display(p))
				}
				return nil
			})
		}
	}
	if root, ok := s.ro.Root(RootRepo); ok && repoToo && len(found) == 0 {
		dir := path.Dir(filepath.ToSlash(filepath.Clean(rel)))
		if fsys, err := s.ro.FS(root); err == nil && filepath.IsLocal(filepath.FromSlash(dir)) {
			if es, err := fs.ReadDir(fsys, dir); err == nil {
				for _, e := range es {
					if strings.ToLower(e.Name()) == want {
						found = append(found, root.Display(path.Join(dir, e.Name())))
					}
				}
			}
		}
	}
	sort.Strings(found)
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// probablyMeant is what edit adds to "does not exist": the memory file
// the model probably meant, or that rel is a repository file (read-only).
func (s *Set) probablyMeant(rel string) string {
	if g := s.guess(rel, false); g != "" {
		return "; did you mean " + sandbox.SafeName(g) + "?"
	}
	if root, ok := s.ro.Root(RootRepo); ok {
		if r, rrel, err := s.ro.Resolve(filepath.Join(root.DisplayDir, rel)); err == nil && r.Name == RootRepo {
			if _, err := s.ro.Stat(r, rrel); err == nil {
				return fmt.Sprintf(" in the memory directory (%s is a repository file, which is read-only)", sandbox.SafeName(r.Display(rrel)))
			}
		}
	}
	return " in the memory directory"
}

// evidenceRule is what write and edit tell the model about changing a
// value.
const evidenceRule = "A change to a specific value (a number, date, version, port, path, identifier, name, URL, or a do/don't, always/never) lands only " +
	"if a transcript or repository file a tool showed you in this dream states the new value (or the repository no longer has the old path or name); " +
	"otherwise it is held for the user's review. Cite it with evidence {file_path, quote}: it is checked against what you were shown."
