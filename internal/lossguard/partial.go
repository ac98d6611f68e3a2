package lossguard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files streams memory files, one at a time: fn is called with each file's
// slash path and bytes, which it must not keep.
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
	v := Check(before, after, o)
	if o.Strict || (len(v.Lost) == 0 && !(len(v.Shrunk) > 0 && v.Units == 0)) {
		// Strict: a unit no record names fails wherever its text went.
		// Nothing lost: holding depends on the shrunk files alone.
		return v, nil
	}
	if o.MaxLoss <= 0 {
		o.MaxLoss = DefaultMaxLoss
	}
	type candidate struct {
		Unit
		norm  string
		bytes int
	}
	byFile := map[string][]leaf{}
	var lost []*candidate
	for _, u := range v.Lost {
		ls, ok := byFile[u.File]
		if !ok {
			ls = leaves(u.File, before[u.File])
			byFile[u.File] = ls
		}
		for _, l := range ls {
			if l.line == u.Line && l.text == u.Text {
				lost = append(lost, &candidate{Unit: u, norm: l.norm, bytes: l.end - l.start})
				break
			}
		}
	}
	err := unchanged(func(rel string, src []byte) error {
		ls := leaves(rel, src)
		for _, l := range ls {
			v.Units++
			v.Bytes += l.end - l.start
		}
		for _, c := range lost {
			if c.norm == "" || c.Line < 0 {
				continue
			}
			for _, l := range ls {
				if l.norm == c.norm || len(c.norm) >= minMergedLen && strings.Contains(l.norm, c.norm) {
					c.Line = -1 - c.Line // found: moved into a file that already said it
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return v, fmt.Errorf("loss guard: reading the unchanged files: %w", err)
	}
	v.Lost, v.LostBytes = nil, 0
	for _, c := range lost {
		if c.Line < 0 {
			continue
		}
		v.Lost = append(v.Lost, c.Unit)
		v.LostBytes += c.bytes
	}
	v.Hold = v.Units > 0 && (float64(len(v.Lost)) > o.MaxLoss*float64(v.Units) ||
		float64(v.LostBytes) > o.MaxLoss*float64(v.Bytes) || len(v.Shrunk) > 0)
	return v, nil
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
