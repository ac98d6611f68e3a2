// Package historydream is nanobot's Dream: it consumes the unprocessed
// entries of WORKSPACE/memory/history.jsonl, batch after batch, into
// SOUL.md, USER.md, memory/MEMORY.md and skills/, with a model whose writes
// are confined to those files. The prompt, batch size, per-entry and
// per-file caps and the completion rule follow nanobot's MemoryStore
// (HKUDS/nanobot, nanobot/agent/memory.py: build_dream_prompt,
// _render_current_memory_files, build_dream_tools, dream_run_completed).
// The files a dream may write and the commit to nanobot's own git store
// are package nanobotws's.
//
// The package works on a directory it is given (the journal's staging copy
// of the workspace), so that everything it writes, the memory files and the
// dream cursor alike, lands together when the dream commits, or not at all.
package historydream

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/history"
	"github.com/dreamkit/dream/internal/nanobotws"
)

// Numbers from nanobot's MemoryStore.
const (
	// BatchSize is build_dream_prompt's max_entries.
	BatchSize = 20
	// EntryChars is the cut applied to each entry in the prompt.
	EntryChars = 1000
	// FileEmbedCap is _DREAM_FILE_EMBED_CAP, per embedded memory file.
	FileEmbedCap = 8000
)

//go:embed templates/dream.md
var defaultTemplate string

// DefaultTemplate is the dream instructions used when a workspace has none.
func DefaultTemplate() string { return defaultTemplate }

// BuildPrompt renders nanobot's dream prompt: the template, the current
// memory files (each capped, "(empty)" when missing), and the batch, one
// "[timestamp] content" line per entry, each entry cut to EntryChars.
func BuildPrompt(template, workspace string, batch []history.Entry) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(template))
	b.WriteString("\n\n")
	b.WriteString(renderFiles(workspace))
	b.WriteString("\n\n## Conversation History\n")
	for i, e := range batch {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s] %s", e.Timestamp, history.Truncate(e.Content, EntryChars))
	}
	return b.String()
}

func renderFiles(workspace string) string {
	blocks := make([]string, 0, len(nanobotws.ContentFiles))
	for _, rel := range nanobotws.ContentFiles {
		data, _ := os.ReadFile(filepath.Join(workspace, filepath.FromSlash(rel)))
		content := string(data)
		if n := len([]rune(content)); n > FileEmbedCap {
			content = history.Truncate(content, FileEmbedCap) + "\n...[truncated]"
		}
		if strings.TrimSpace(content) == "" {
			content = "(empty)"
		}
		blocks = append(blocks, "### "+rel+"\n"+content)
	}
	return "## Current Memory Files\n" + strings.Join(blocks, "\n\n")
}
