package offline

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/memory"
)

// fixDangling removes index pointers whose local target does not exist. A
// pointer to a URL or outside the memory dir cannot be checked and stays.
func (s *state) fixDangling() {
	if s.index == nil {
		return
	}
	del := map[int]bool{}
	for i, l := range s.index.lines {
		p := memory.ParseIndexLine(l.orig, l.text)
		if !p.IsPointer || isPinned(l.text) {
			continue
		}
		rel, ok := memory.LocalTarget(p.Target)
		if !ok || s.exists(rel) {
			continue
		}
		del[i] = true
		s.fixes = append(s.fixes, Fix{Kind: KindDanglingPointer, File: memory.IndexFile, Line: l.orig,
			Detail: fmt.Sprintf("removed pointer to missing %s: %q", rel, l.text)})
	}
	s.index.deleteMarked(del)
}

// exists reports whether rel names a file or directory in the memory dir.
func (s *state) exists(rel string) bool {
	if _, ok := s.byRel[rel]; ok {
		return true
	}
	_, err := os.Lstat(filepath.Join(s.opts.MemoryDir, filepath.FromSlash(rel)))
	return err == nil
}
