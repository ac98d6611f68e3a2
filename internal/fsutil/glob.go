package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Glob is filepath.Glob(filepath.Join(dir, pattern)) for a pattern of one
// path element, with dir taken as it is: a state or memory dir's path may
// hold glob characters ("st[1]", "notes*"), which filepath.Glob would read
// as a pattern and then find nothing, or something else. A dir that does
// not exist has no matches; the matches are sorted, as Glob's are.
func Glob(dir, pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if ok, _ := filepath.Match(pattern, de.Name()); ok {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out, nil
}
