package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
)

// ParkedMemoryDirs returns, sorted and without repeats, the memory dirs of
// the parked (staged for review) transactions under stateDir whose id is or
// starts with id: a staged dream is findable from its id alone even once
// its task entry and its events are gone, since its staging outlives both
// until it is applied or discarded.
func ParkedMemoryDirs(stateDir, id string) ([]string, error) {
	if id == "" {
		return nil, nil
	}
	roots, err := fsutil.Glob(filepath.Join(stateDir, "journal"), "*")
	if err != nil {
		return nil, fmt.Errorf("journal: find %q: %w", id, err)
	}
	seen := map[string]bool{}
	var out []string
	for _, root := range roots {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		entries, err := list(root)
		if err != nil {
			return nil, fmt.Errorf("journal: find %q: %w", id, err)
		}
		for _, e := range entries {
			if e.err != nil || e.rec.State != StateParked || !strings.HasPrefix(e.name, id) || !filepath.IsAbs(e.rec.MemoryDir) {
				continue
			}
			if mem := filepath.Clean(e.rec.MemoryDir); !seen[mem] {
				seen[mem] = true
				out = append(out, mem)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
