package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// ErrNameCollides reports a new memory path that another entry already
// holds on a file system that ignores letter case or Unicode normalisation.
var ErrNameCollides = errors.New("name collides with an existing one on case-insensitive file systems")

// CheckSpelling refuses a memory path that names a new entry whose name
// differs from an existing one's only in letter case or in how its accented
// letters are encoded (Unicode NFC or NFD): "Build.md" beside "build.md",
// "MEMORY.MD" beside "MEMORY.md", "café.md" twice. Linux keeps both; macOS
// and Windows keep one file for both names, so the memory synced to a
// laptop silently loses one of them (the index, it may be). Every component
// is checked, directories too, against the staging copy, which holds the
// memory and whatever the dream already created. A path that exists with
// exactly this spelling passes: writing it replaces that file.
func (m *Memory) CheckSpelling(rel string) error {
	dir := "."
	for _, part := range strings.Split(rel, "/") {
		names, err := m.readDirNames(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("checking the name %s: %w", rel, err)
		}
		if slices.Contains(names, part) {
			dir = path.Join(dir, part)
			continue
		}
		key := nameKey(part)
		for _, n := range names {
			if nameKey(n) == key {
				return m.collision(path.Join(dir, part), path.Join(dir, n), part == path.Base(rel))
			}
		}
		return nil // a new name: nothing below it exists yet
	}
	return nil
}

// collision explains a refused name and what to do instead.
func (m *Memory) collision(want, have string, last bool) error {
	how := "letter case"
	if !strings.EqualFold(want, have) {
		how = "letter case or in how accented letters are encoded (Unicode normalisation)"
	}
	fi, err := m.root.Lstat(filepath.FromSlash(have))
	haveDir := err == nil && fi.IsDir()
	instead := "choose another name"
	switch {
	case last && !haveDir:
		instead = fmt.Sprintf("edit %s instead", SafeName(m.Display(have)))
	case !last && haveDir:
		instead = fmt.Sprintf("put the file under %s instead", SafeName(m.Display(have)))
	}
	return fmt.Errorf("%w: %s collides with the existing %s: the names differ only in %s, and macOS and Windows keep one file for both; %s",
		ErrNameCollides, SafeName(m.Display(want)), SafeName(m.Display(have)), how, instead)
}

// readDirNames lists a directory of the memory (slash-separated, relative).
func (m *Memory) readDirNames(dir string) ([]string, error) {
	f, err := m.root.Open(filepath.FromSlash(dir))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// nameKey is what two names share when a case-insensitive,
// normalisation-insensitive file system takes them for one: Unicode's
// canonical caseless match, NFD(fold(NFD(name))), with full case folding
// ("Straße" and "STRASSE" match too, as they do on some of those systems:
// refusing a name is cheaper than losing a file).
func nameKey(name string) string {
	return norm.NFD.String(cases.Fold().String(norm.NFD.String(name)))
}
