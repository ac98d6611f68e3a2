package offline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/memory"
)

// Ref is a place in a memory file.
type Ref struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Pair is two memory units that say almost the same thing.
type Pair struct {
	A, B       Ref
	Similarity float64 `json:"similarity"`
}

// Suspect is something a memory names that the repository no longer has.
type Suspect struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Mention string `json:"mention"`
	// Kind is "path", "file" or "identifier".
	Kind string `json:"kind"`
}

// Leads are judgement calls the engine will not make itself but can point
// the model to, so that it spends its turns deciding rather than searching.
type Leads struct {
	NearDuplicates []Pair    `json:"near_duplicates"`
	DriftSuspects  []Suspect `json:"drift_suspects"`
	// Truncated is set when the repository was too large to index fully;
	// checks that could not be completed were skipped, not guessed.
	Truncated bool `json:"truncated,omitempty"`
}

// FindLeads reads the memory and walks the repository once. repoDir may be
// empty, in which case there are no drift suspects.
func FindLeads(ctx context.Context, memoryDir, repoDir string) (Leads, error) {
	var l Leads
	dir, err := memory.Load(memoryDir)
	if err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	s, err := newState(dir, Options{MemoryDir: memoryDir, Now: time.Now()})
	if err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	if l.NearDuplicates, err = nearDuplicates(ctx, s.readingOrder()); err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	if repoDir == "" {
		return l, nil
	}
	repo, err := indexRepo(ctx, repoDir, defaultRepoLimits)
	if err != nil {
		return l, fmt.Errorf("find leads: %w", err)
	}
	l.Truncated = repo.truncated
	l.DriftSuspects = driftSuspects(s, repo)
	return l, nil
}

// Markdown renders the leads for the model's task prompt, at most max bytes;
// what does not fit is counted, not silently dropped.
func (l Leads) Markdown(max int) string {
	if len(l.NearDuplicates) == 0 && len(l.DriftSuspects) == 0 {
		return ""
	}
	lines := []string{"## Leads from the offline engine\n\nThese are suspects, not verdicts: check each before acting.\n"}
	if len(l.NearDuplicates) > 0 {
		lines = append(lines, "\n### Near-duplicates (merge if they say the same thing)\n\n")
		for _, p := range l.NearDuplicates {
			lines = append(lines, fmt.Sprintf("- %s:%d and %s:%d (%.0f%% similar): %q / %q\n",
				p.A.File, p.A.Line, p.B.File, p.B.Line, 100*p.Similarity, clip(p.A.Text, 100), clip(p.B.Text, 100)))
		}
	}
	if len(l.DriftSuspects) > 0 {
		lines = append(lines, "\n### Possibly drifted (named in memory, not found in the repository)\n\n")
		for _, d := range l.DriftSuspects {
			lines = append(lines, fmt.Sprintf("- %s:%d names %s `%s`\n", d.File, d.Line, d.Kind, d.Mention))
		}
	}
	if l.Truncated {
		lines = append(lines, "\nThe repository was too large to index fully; some mentions were not checked.\n")
	}
	// Stop at the first line that does not fit, keeping room to say how
	// many were left out, so that the output never skips a heading's items.
	const reserve = 48
	var b strings.Builder
	for i, s := range lines {
		room := max
		if i < len(lines)-1 {
			room -= reserve
		}
		if b.Len()+len(s) > room {
			if note := fmt.Sprintf("\n… %d more lines of leads omitted.\n", len(lines)-i); b.Len()+len(note) <= max {
				b.WriteString(note)
			}
			break
		}
		b.WriteString(s)
	}
	return b.String()
}

func clip(s string, n int) string {
	s = collapseSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
