package nanobot

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Numbers from nanobot's MemoryStore.
const (
	// DreamBatchSize is build_dream_prompt's max_entries.
	DreamBatchSize = 20
	// DreamEntryChars is the cut applied to each entry in the prompt.
	DreamEntryChars = 1000
	// DreamFileEmbedCap is _DREAM_FILE_EMBED_CAP, per embedded memory file.
	DreamFileEmbedCap = 8000
)

//go:embed templates/dream.md
var defaultDreamTemplate string

// DefaultDreamTemplate is the dream instructions used when a workspace has none.
func DefaultDreamTemplate() string { return defaultDreamTemplate }

// BuildDreamPrompt renders nanobot's dream prompt: the template, the current
// memory files (each capped, "(empty)" when missing), and the batch, one
// "[timestamp] content" line per entry, each entry cut to DreamEntryChars.
func BuildDreamPrompt(template, workspace string, batch []Entry) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(template))
	b.WriteString("\n\n")
	b.WriteString(renderFiles(workspace))
	b.WriteString("\n\n## Conversation History\n")
	for i, e := range batch {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s] %s", e.Timestamp, Truncate(e.Content, DreamEntryChars))
	}
	return b.String()
}

func renderFiles(workspace string) string {
	blocks := make([]string, 0, len(ContentFiles))
	for _, rel := range ContentFiles {
		data, _ := os.ReadFile(filepath.Join(workspace, filepath.FromSlash(rel)))
		content := string(data)
		if n := len([]rune(content)); n > DreamFileEmbedCap {
			content = Truncate(content, DreamFileEmbedCap) + "\n...[truncated]"
		}
		if strings.TrimSpace(content) == "" {
			content = "(empty)"
		}
		blocks = append(blocks, "### "+rel+"\n"+content)
	}
	return "## Current Memory Files\n" + strings.Join(blocks, "\n\n")
}
