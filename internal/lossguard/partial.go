package lossguard

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files streams memory files, one at a time: fn is called with each file's
// slash path and bytes, which are fn's from then on (the stream does not
// reuse them: the guard parses them on other goroutines).
type Files func(fn func(rel string, src []byte) error) error

// CheckChanged is Check at the cost of the change: before and after hold
// only the files a dream changed (as they were when it started, and as it
// left them), and unchanged streams the others, which are the same on both
// sides. The unchanged files are read only when the verdict depends on
// them: to look for a unit that left its changed file (it may have moved
// into a file that already said it) and to count the units and bytes the
// loss share is taken of. A dream that lost nothing never reads them, so
// neither its time nor its memory grows with the memory's size. The
// verdict is the one Check would give on the whole trees.
func CheckChanged(before, after Tree, unchanged Files, o Options) (Verdict, error) {
	return CheckFiles(context.Background(), treeNames(before, after), TreeSides(before, after), unchanged, o)
}

// WalkTree streams the Markdown files under dir that ReadTree would read,
// except those skip names, one at a time.
func WalkTree(dir string, skip func(rel string) bool) Files {
	return func(fn func(rel string, src []byte) error) error {
		return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == dir {
				return nil
			}
			if strings.HasPrefix(e.Name(), ".") {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !e.Type().IsRegular() || !strings.EqualFold(filepath.Ext(p), ".md") {
				return nil
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if skip != nil && skip(rel) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return fn(rel, b)
		})
	}
}
