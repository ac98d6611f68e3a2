package offline

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/memory"
)

// fixDangling takes index pointers whose local target does not exist out of
// the index. A pointer with a hook may carry the only copy of a fact ("- [API]
// (api.md) — 100 requests a minute"), so its title and hook, without the dead
// link, move to the overflow file; a bare link says nothing and is removed. A pointer to a URL or outside the
// memory dir cannot be checked and stays.
func (s *state) fixDangling() {
	if s.index == nil {
		return
	}
	del := map[int]bool{}
	moved := false
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
		if p.Hook != "" {
			// The fact stays, the dead link goes.
			s.moveToOverflow(sectionOf(s.index, i), "- "+p.Title+" — "+p.Hook)
			moved = true
			s.fixes = append(s.fixes, Fix{Kind: KindDanglingPointer, File: memory.IndexFile, Line: l.orig,
				Detail: fmt.Sprintf("moved the text of the pointer to missing %s to %s: %q", rel, OverflowFile, l.text)})
			continue
		}
		s.fixes = append(s.fixes, Fix{Kind: KindDanglingPointer, File: memory.IndexFile, Line: l.orig,
			Detail: fmt.Sprintf("removed pointer to missing %s: %q", rel, l.text)})
	}
	s.index.deleteMarked(del)
	if moved {
		s.ensureOverflowIndexed()
	}
}

// exists reports whether rel names a file or directory in the memory dir.
func (s *state) exists(rel string) bool {
	if _, ok := s.byRel[rel]; ok {
		return true
	}
	_, err := os.Lstat(filepath.Join(s.opts.MemoryDir, filepath.FromSlash(rel)))
	return err == nil
}
