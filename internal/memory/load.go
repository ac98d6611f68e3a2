package memory

import "fmt"

// Load reads a memory directory. It skips the consolidation lock, hidden
// files and directories (editors' swap files, .git), and records any other
// non-markdown file in Other. Symbolic links are not followed: memory is a
// plain tree, and following a link could read outside it.
func Load(dir string) (*Dir, error) {
	l, err := List(dir)
	if err != nil {
		return nil, err
	}
	r, err := OpenReader(l.Root)
	if err != nil {
		return nil, fmt.Errorf("load memory dir %s: %w", dir, err)
	}
	defer r.Close()
	d := &Dir{Root: dir, Other: l.Other}
	if l.Index {
		data, _, err := r.ReadFile(IndexFile)
		if err != nil {
			return nil, fmt.Errorf("load memory dir %s: %w", dir, err)
		}
		d.Index = ParseIndex(data)
	}
	for _, rel := range l.Topics {
		data, _, err := r.ReadFile(rel)
		if err != nil {
			return nil, fmt.Errorf("load memory dir %s: %w", dir, err)
		}
		d.Topics = append(d.Topics, ParseTopic(rel, data))
	}
	return d, nil
}
