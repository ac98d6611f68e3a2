// Package prompt renders the two texts a dream sends its model: the system
// prompt, which is stable for a memory directory so that every dream on it
// shares a cacheable prefix, and the task message, which carries what changes
// from one dream to the next (today's date, leads, pinned facts).
//
// The texts live in embedded templates so they can be read and reviewed as
// prose; golden files pin their exact output.
package prompt

import (
	"embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/template"
	"time"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// templates is parsed once, on first use rather than at package init (the
// hook path links this package and never renders a prompt); it is never
// modified after, so sharing it is safe.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").
		Option("missingkey=error").
		Funcs(funcs).
		ParseFS(templateFS, "templates/*.tmpl"))
})

// funcs are the functions every template may call, a job's own included.
var funcs = template.FuncMap{"pinned": pinnedItem, "join": strings.Join}

// SystemData locates the memory. It must stay identical between dreams on the
// same memory dir: no timestamps, no ids, or the prompt cache is lost.
type SystemData struct {
	// MemoryDir is where the model may write; required.
	MemoryDir string
	// RepoDir is the code the memory describes; optional.
	RepoDir string
	// SessionsDir holds the host's transcripts; optional.
	SessionsDir string
}

// System renders the system prompt.
func System(d SystemData) (string, error) {
	if strings.TrimSpace(d.MemoryDir) == "" {
		return "", errors.New("prompt: system: memory dir is required")
	}
	for name, v := range map[string]string{"memory dir": d.MemoryDir, "repo dir": d.RepoDir, "sessions dir": d.SessionsDir} {
		if strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("prompt: system: %s %q contains a line break", name, v)
		}
	}
	return render("system.tmpl", d)
}

// TaskData is what changes from one dream to the next.
type TaskData struct {
	// Today is the date, YYYY-MM-DD, relative dates are resolved against.
	Today string
	// SessionsReviewed is how many transcripts changed since the last dream.
	SessionsReviewed int
	// Leads is Markdown from the offline engine (near-duplicates, drift
	// suspects); may be empty.
	Leads string
	// Pinned are facts that must survive the dream verbatim.
	Pinned []string
	// Previous is the previous dream's record (dream.Job.Previous): what
	// it changed or staged; may be empty.
	Previous string
}

// Task renders the first user message: the four-phase consolidation task.
func Task(d TaskData) (string, error) {
	if _, err := time.Parse(time.DateOnly, d.Today); err != nil {
		return "", fmt.Errorf("prompt: task: today %q is not a YYYY-MM-DD date: %w", d.Today, err)
	}
	if d.SessionsReviewed < 0 {
		return "", fmt.Errorf("prompt: task: negative sessions reviewed %d", d.SessionsReviewed)
	}
	for i, p := range d.Pinned {
		if strings.TrimSpace(p) == "" {
			return "", fmt.Errorf("prompt: task: pinned fact %d is empty", i)
		}
	}
	d.Leads = strings.TrimSpace(d.Leads)
	d.Previous = strings.TrimSpace(d.Previous)
	return render("task.tmpl", d)
}

func render(name string, data any) (string, error) {
	var b strings.Builder
	if err := templates().ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("prompt: rendering %s: %w", name, err)
	}
	return b.String(), nil
}

// pinnedItem renders one pinned fact as a list item. Continuation lines are
// indented so a multi-line fact stays one item; the text itself is unchanged.
func pinnedItem(fact string) string {
	return "- " + strings.ReplaceAll(fact, "\n", "\n  ")
}
