package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
)

// memoryDirNote is the file, inside each audit repository, that names the
// memory dir the repository records. The repository's own name is a hash of
// that path (journal.MemKey), which cannot be turned back into it; the note
// lets someone holding only an entry id (an undo's, a hand edit's, a dream's
// whose task entry was pruned) find the memory it belongs to.
const memoryDirNote = "dream-memory-dir"

// noteMemoryDir writes the note when it is missing or names another path,
// so repositories created before notes existed gain one on their next use.
func (h *History) noteMemoryDir() error {
	p := filepath.Join(h.gitDir, memoryDirNote)
	if cur, err := os.ReadFile(p); err == nil && string(cur) == h.memDir+"\n" {
		return nil
	}
	return fsutil.WriteFileAtomic(p, []byte(h.memDir+"\n"), 0o600, true)
}

// Found is one audit history that knows an id.
type Found struct {
	// MemoryDir is the memory dir the history records; it may no longer
	// exist (a deleted demo, a moved project).
	MemoryDir string
	// ID is the full entry id the query resolved to; empty when it is a
	// prefix of several entries of this history (Show then lists them).
	ID string
}

// Find returns, sorted by memory dir, every audit history under stateDir
// with an entry id is, or starts with, id, or with a commit whose sha starts
// with it (what Show accepts). Histories without a memory-dir note are
// skipped: they gain one the next time anything opens them.
func Find(ctx context.Context, stateDir, id string) ([]Found, error) {
	if id == "" {
		return nil, fmt.Errorf("audit: find: %w: empty id", ErrNotFound)
	}
	repos, err := fsutil.Glob(filepath.Join(stateDir, "audit"), "*.git")
	if err != nil {
		return nil, fmt.Errorf("audit: find: %w", err)
	}
	if len(repos) == 0 {
		return nil, nil
	}
	bin, err := gitBinary()
	if err != nil {
		return nil, fmt.Errorf("audit: find: %w", err)
	}
	var out []Found
	for _, gitDir := range repos {
		note, err := os.ReadFile(filepath.Join(gitDir, memoryDirNote))
		if err != nil {
			continue
		}
		mem := strings.TrimSuffix(string(note), "\n")
		if mem == "" || strings.ContainsAny(mem, "\n\x00") || !filepath.IsAbs(mem) {
			continue
		}
		// Listing commits reads no work tree, and the memory dir may be
		// gone: the repository itself stands in for it, since git refuses
		// a work tree that does not exist.
		h := &History{gitDir: gitDir, memDir: gitDir, gitBin: bin}
		all, err := h.commits(ctx, 0)
		if err != nil {
			return nil, fmt.Errorf("audit: find %q in the history of %s: %w", id, mem, err)
		}
		if f, ok := match(all, id); ok {
			f.MemoryDir = mem
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MemoryDir < out[j].MemoryDir })
	return out, nil
}

// match finds id among commits as resolve does: an exact entry id first,
// else the prefix of entry ids and shas.
func match(all []commitInfo, id string) (Found, bool) {
	for _, ci := range all {
		if entryID(ci) == id {
			return Found{ID: id}, true
		}
	}
	n, full := 0, ""
	for _, ci := range all {
		if strings.HasPrefix(entryID(ci), id) || strings.HasPrefix(ci.sha, strings.ToLower(id)) {
			n++
			full = entryID(ci)
		}
	}
	switch n {
	case 0:
		return Found{}, false
	case 1:
		return Found{ID: full}, true
	}
	return Found{}, true
}

// Dreamed reports whether the history of memoryDir under stateDir records a
// change made by dream (a dream, an undo, an applied review), as opposed to
// none or only hand edits. It creates nothing: a memory never opened has no
// history and has not dreamed.
func Dreamed(ctx context.Context, stateDir, memoryDir string) (bool, error) {
	key, err := journal.MemKey(memoryDir)
	if err != nil {
		return false, fmt.Errorf("audit: dreamed: %w", err)
	}
	gitDir := filepath.Join(stateDir, "audit", key+".git")
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		return false, nil
	}
	bin, err := gitBinary()
	if err != nil {
		return false, fmt.Errorf("audit: dreamed: %w", err)
	}
	h := &History{gitDir: gitDir, memDir: gitDir, gitBin: bin}
	all, err := h.commits(ctx, 0)
	if err != nil {
		return false, fmt.Errorf("audit: dreamed: %w", err)
	}
	for _, ci := range all {
		if k := ci.trailers["Dream-Kind"]; k != "" && k != KindHand {
			return true, nil
		}
	}
	return false, nil
}
