//go:build !linux

package offline

import (
	"io/fs"

	"github.com/dreamkit/dream/internal/memory"
)

// memoryList is the memory's Markdown files in scan order (the index
// first, then the others sorted by path), from memory.List; they are read
// through the memory reader.
type memoryList struct {
	root  string
	index bool
	rels  []string
	links []string
}

func listMemory(dir string) (*memoryList, error) {
	l, err := memory.List(dir)
	if err != nil {
		return nil, err
	}
	m := &memoryList{root: l.Root, index: l.Index, links: l.Links}
	if l.Index {
		m.rels = append(m.rels, memory.IndexFile)
	}
	m.rels = append(m.rels, l.Topics...)
	return m, nil
}

func (l *memoryList) read(int) ([]byte, fs.FileMode, bool, error) {
	return nil, 0, false, nil
}

func (l *memoryList) close() {}
