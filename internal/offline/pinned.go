package offline

import (
	"fmt"
	"strings"

	"github.com/dreamkit/dream/internal/memory"
)

// PinnedFacts returns the facts a dream must keep: the text of every memory
// line marked "<!-- pin -->" (marker and list bullet stripped, trimmed), then
// the extra strings configured by the user, without repeats, in that order.
// A dream that loses one of them is rolled back by the caller.
func PinnedFacts(memoryDir string, extra []string) ([]string, error) {
	dir, err := memory.Load(memoryDir)
	if err != nil {
		return nil, fmt.Errorf("pinned facts: %w", err)
	}
	var facts []string
	seen := map[string]bool{}
	add := func(f string) {
		f = strings.TrimSpace(f)
		if f != "" && !seen[f] {
			seen[f] = true
			facts = append(facts, f)
		}
	}
	for _, text := range fileTexts(dir) {
		for _, l := range memory.SplitLines(text) {
			if !isPinned(l) {
				continue
			}
			f := strings.TrimSpace(pinRE.ReplaceAllString(l, ""))
			if m := bulletRE.FindStringSubmatch(f); m != nil {
				f = m[2]
			}
			add(f)
		}
	}
	for _, e := range extra {
		add(e)
	}
	return facts, nil
}

// MissingPinned returns the facts that no memory file contains any more.
// The search ignores differences in whitespace, so re-wrapping a line or
// re-indenting a list does not count as losing it.
func MissingPinned(facts []string, memoryDir string) ([]string, error) {
	dir, err := memory.Load(memoryDir)
	if err != nil {
		return nil, fmt.Errorf("missing pinned: %w", err)
	}
	var texts []string
	for _, t := range fileTexts(dir) {
		texts = append(texts, collapseSpace(t))
	}
	var missing []string
	for _, f := range facts {
		want := collapseSpace(f)
		if want == "" {
			continue
		}
		found := false
		for _, t := range texts {
			if strings.Contains(t, want) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, f)
		}
	}
	return missing, nil
}

// fileTexts is the text of every memory file, the index first.
func fileTexts(dir *memory.Dir) []string {
	var out []string
	if dir.Index != nil {
		var b strings.Builder
		for _, l := range dir.Index.Lines {
			b.WriteString(l.Raw)
			b.WriteByte('\n')
		}
		out = append(out, b.String())
	}
	for _, t := range dir.Topics {
		out = append(out, string(t.Raw))
	}
	return out
}
