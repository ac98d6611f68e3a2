package prompt

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"
)

// JobData is what a job's prompts may use: the memory prompt's variables
// and the job's own. Like SystemData, the system prompt's part stays the
// same from one run to the next.
type JobData struct {
	// The memory prompt's variables (SystemData, TaskData). For a job,
	// MemoryDir is its write dir.
	Today            string
	SessionsReviewed int
	Leads            string
	Pinned           []string
	MemoryDir        string
	RepoDir          string
	SessionsDir      string
	Previous         string

	// The job's own.
	Name string
	// Files are the files the job may write in MemoryDir (empty: any).
	Files []string
	// Report is the absolute path of the job's report; "" when it has none.
	Report string
	// LastRun is when the job last completed, YYYY-MM-DD HH:MM UTC; ""
	// when it never did.
	LastRun string
	// AgentMemoryDir is the agent's memory, when the job may read it.
	AgentMemoryDir string
}

// JobSystem renders a job's system prompt.
func JobSystem(d JobData) (string, error) {
	if strings.TrimSpace(d.MemoryDir) == "" || d.Name == "" {
		return "", errors.New("prompt: job system: a job needs its name and write dir")
	}
	for _, v := range []string{d.MemoryDir, d.RepoDir, d.SessionsDir, d.AgentMemoryDir, d.Name} {
		if strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("prompt: job system: %q contains a line break", v)
		}
	}
	return render("job_system.tmpl", d)
}

// JobTask renders a job's task: text, the job's prompt template, or the
// built-in prompt of the engine it uses (uses) when text is empty. A
// template that names a variable JobData does not have is an error, not
// "<no value>" sent to a model.
func JobTask(text, uses string, d JobData) (string, error) {
	if _, err := time.Parse(time.DateOnly, d.Today); err != nil {
		return "", fmt.Errorf("prompt: job task: today %q is not a YYYY-MM-DD date: %w", d.Today, err)
	}
	if text == "" {
		if uses == "" {
			return "", errors.New("prompt: job task: no prompt")
		}
		return render(uses+".tmpl", d)
	}
	t, err := template.New("job").Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return "", fmt.Errorf("prompt: the job's prompt: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompt: the job's prompt: %w", err)
	}
	return b.String(), nil
}
