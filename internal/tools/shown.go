package tools

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/sandbox"
)

// maxShownBytes bounds what one dream records of the results it showed the
// model: past it a result is still shown, only no longer evidence, so a
// change it alone would support is staged for review, never landed.
const maxShownBytes = 32 << 20

// shownLog records what the read-only tools showed the model from outside
// the memory (transcripts, repository files), and the model's checked
// citations: the evidence a changed value in memory needs (see package
// evidence).
type shownLog struct {
	mu        sync.Mutex
	bytes     int
	shown     []evidence.Shown
	citations []evidence.Citation
}

// Shown is what the tools showed the model from transcripts and repository
// files in this dream, in the order shown.
func (s *Set) Shown() []evidence.Shown {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return append([]evidence.Shown(nil), s.log.shown...)
}

// Citations are the evidence the model cited in its write and edit calls,
// each checked against what it was shown before the call was accepted.
func (s *Set) Citations() []evidence.Citation {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return append([]evidence.Citation(nil), s.log.citations...)
}

// show records a result of tool about source (a path under root) unless it
// is memory: the memory is what a change is judged against, never its
// evidence. Lines of a listing or a search that name memory files (a memory
// dir inside the repository) are left out for the same reason.
func (s *Set) show(tool string, root sandbox.NamedRoot, source, text string) {
	if root.Name == RootMemory || text == "" {
		return
	}
	mem := s.mem.DisplayDir() + string(filepath.Separator)
	if tool != "read" && strings.Contains(text, mem) {
		var kept []string
		for _, line := range strings.SplitAfter(text, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), mem) {
				kept = append(kept, line)
			}
		}
		text = strings.Join(kept, "")
	}
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	if s.log.bytes+len(text) > maxShownBytes {
		return
	}
	s.log.bytes += len(text)
	s.log.shown = append(s.log.shown, evidence.Shown{Tool: tool, Source: source, Text: text})
}

// citeInput is the evidence field of write and edit.
type citeInput struct {
	FilePath string `json:"file_path" desc:"The transcript or repository file that shows the new value: absolute, or relative (a memory file first, then the repository)"`
	Quote    string `json:"quote" desc:"The words of that file, as a tool showed them to you in this dream, that state the new value"`
}

// cite checks the model's citation (the evidence field of a write or edit
// call's input, already checked against the tool's spec) for a change to
// the memory file rel and records it: the file must be one a tool showed
// it in this dream, outside the memory, and the quote must be in what it
// was shown.
func (s *Set) cite(tool, rel string, input json.RawMessage) error {
	var in struct {
		Evidence *citeInput `json:"evidence"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.Evidence == nil {
		return nil
	}
	c := in.Evidence
	root, crel, err := s.resolveRead(c.FilePath)
	if err != nil {
		return fmt.Errorf("%s: evidence.file_path: %w", tool, err)
	}
	if root.Name == RootMemory {
		return fmt.Errorf("%s: evidence.file_path %s is a memory file; evidence is a transcript or a repository file that shows the new value", tool, sandbox.SafeName(root.Display(crel)))
	}
	source := root.Display(crel)
	s.log.mu.Lock()
	ok := evidence.Quoted(s.log.shown, source, c.Quote)
	if ok {
		s.log.citations = append(s.log.citations, evidence.Citation{File: rel, Source: source, Quote: c.Quote})
	}
	s.log.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s: evidence.quote is not in what read or grep showed you of %s in this dream; read (or grep) that file, quote its words exactly, or leave evidence out",
			tool, sandbox.SafeName(source))
	}
	return nil
}
