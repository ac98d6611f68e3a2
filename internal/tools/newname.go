package tools

import "fmt"

// checkNewPath refuses, at the call, a memory path the write would create
// but the memory cannot keep: one its file system cannot hold (it would
// fail the dream's commit and lose its other edits with it), or one that
// is another file's name on a case-insensitive file system (sync would
// keep only one of them). The message says what to do instead.
func (s *Set) checkNewPath(tool, rel string) error {
	if err := s.mem.CheckFits(rel); err != nil {
		return fmt.Errorf("%s refused: %w", tool, err)
	}
	return s.checkSpelling(tool, rel)
}

// checkSpelling is checkNewPath's name check alone, for edit: an edit
// creates nothing, but on macOS "Build.md" opens build.md, and the edit
// would then rename it.
func (s *Set) checkSpelling(tool, rel string) error {
	if err := s.mem.CheckSpelling(rel); err != nil {
		return fmt.Errorf("%s refused: %w", tool, err)
	}
	return nil
}
