package host

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrNotWritable is returned by CheckEdit for a file no dream may change.
var ErrNotWritable = errors.New("not in the agent's writable set")

// CheckEdit decides whether a dream may replace before with after in rel
// (slash-separated, relative to MemoryDir; before is nil for a new file,
// after nil for a deletion). It is the layout's half of the contract with
// whatever writes memory (the offline engine, a model's edit, a commit):
//
//   - a file outside the writable set (generated, log, cursor, unknown) may
//     not change at all;
//   - the result must still parse in the file's format;
//   - a Codex MEMORY.md keeps every block header byte for byte, in order:
//     only block bodies may change;
//   - a section file (Gemini's global GEMINI.md) keeps every byte outside
//     its memory section.
func (l Layout) CheckEdit(rel string, before, after []byte) error {
	rel = filepath.ToSlash(rel)
	f, ok := l.FileFor(rel)
	if !ok && len(l.Files) == 0 {
		// A layout that lists no files (a bare --memory-dir) constrains
		// nothing beyond the sandbox.
		return nil
	}
	if !ok || !f.Writable {
		return fmt.Errorf("%s: %w", rel, ErrNotWritable)
	}
	if after == nil {
		if f.Role == RoleSchema || f.Role == RoleSection || f.Role == RoleIndex {
			return fmt.Errorf("%s: the agent loads it by name; it may not be deleted", rel)
		}
		return nil
	}
	if err := CheckFormat(f, after); err != nil {
		return fmt.Errorf("%s: the agent could no longer load it: %w", rel, err)
	}
	switch f.Format {
	case FormatCodexMemoryBlocks:
		if before == nil {
			return nil
		}
		old, err := ParseCodexMemory(string(before))
		if err != nil {
			return nil // it did not parse before; the new one does
		}
		cur, _ := ParseCodexMemory(string(after))
		if len(old) != len(cur) {
			return fmt.Errorf("%s: %d blocks became %d: a dream may edit block bodies only", rel, len(old), len(cur))
		}
		for i := range old {
			if old[i].Header != cur[i].Header {
				return fmt.Errorf("%s: block %d's header changed: a dream may edit block bodies only", rel, i+1)
			}
		}
	case FormatSection:
		if before == nil {
			return nil
		}
		bs, be, ok1 := SectionSpan(string(before), f.Section)
		as, ae, ok2 := SectionSpan(string(after), f.Section)
		if !ok1 || !ok2 || string(before[:bs]) != string(after[:as]) || string(before[be:]) != string(after[ae:]) {
			return fmt.Errorf("%s: only the %q section is memory; the rest of the file is the user's", rel, f.Section)
		}
	}
	return nil
}
